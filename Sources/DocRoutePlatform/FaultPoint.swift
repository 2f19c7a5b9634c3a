import CDocRouteShim

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A test's way to fail the Nth system call of one kind with a chosen `errno`, as SQLite's test
/// builds fail their Nth I/O call: the environment variable `DOCROUTE_FAULT`, read once when the
/// binary is loaded, holds up to four rules separated by commas, each `KIND:N:ERRNO` (only the Nth
/// call of that kind fails) or `KIND:N+:ERRNO` (the Nth and every one after it), e.g.
/// `DOCROUTE_FAULT=fsync:3:EIO` or `rename:1+:ENOSPC`. Each failed call writes one line to
/// standard error (`DOCROUTE_FAULT: fsync call 3 failed with errno 5`).
///
/// Only the calls made through this target's wrappers are counted (docs/TESTING.md lists what
/// bypasses them: SQLite's own I/O, SwiftNIO's sockets, Foundation). Unset, a wrapper pays one
/// load of a C global and one branch that is never taken; the counting is out of line.
package enum FaultPoint {
    /// What a rule counts; the names are those `DOCROUTE_FAULT` uses.
    package enum Kind: CInt, Sendable {
        /// `open`, `openat`, `openat2`.
        case open = 1
        /// `pread`.
        case read = 2
        /// `write`, `pwrite`.
        case write = 3
        /// `copy_file_range`.
        case copy = 4
        /// `fsync`, `fdatasync`, `syncfs` (the name `fsync`).
        case sync = 5
        /// `renameat`, `renameat2`.
        case rename = 6
        /// `unlinkat`, of files and of empty folders.
        case unlink = 7
    }

    /// Whether `DOCROUTE_FAULT` armed the fault point in this process.
    package static var isArmed: Bool { docroute_fault_is_armed() != 0 }

    /// Runs the system call `body` unless a rule fails this call of `kind`: then `errno` is set to
    /// the rule's and -1 returned without making the call, as the kernel would have failed it.
    @inline(__always)
    package static func call<Value: SignedInteger>(_ kind: Kind, _ body: () -> Value) -> Value {
        if _slowPath(docroute_fault_is_armed() != 0) {
            let injected = docroute_fault_fire(kind.rawValue)
            if injected != 0 {
                Glibc.errno = injected
                return -1
            }
        }
        return body()
    }
}
