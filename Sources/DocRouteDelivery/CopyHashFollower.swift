import Crypto
import DocRouteLedger
import DocRoutePlatform
import Foundation
import SystemPackage

/// Hashes a large file on a thread of its own while the kernel copies it, a step behind the copy:
/// the file then costs the longer of the two, not their sum (two cores).
///
/// The copying thread reports each range it finished with ``copied(upTo:)`` and ends with
/// ``finish()``; ``digest()`` waits for the hash of everything copied. The bytes hashed are the
/// copy's, read from the page cache through a mapping (``FileDescriptor/withPopulatedMapping(offset:count:_:)``)
/// of at most ``window`` bytes at a time: no `pread` copies them into a buffer first, which was a
/// tenth of a 1 GiB delivery (0.89 s against 0.80 s for the copy, hash and sync of one in C on
/// this machine). The copy is docrouted's own file (created 0600, handed over only once hashed),
/// so nobody else can truncate it under the mapping; the source could be, by whoever dropped it.
/// Where the kernel cannot populate a mapping (before 5.14) the copy is read with `pread`. The
/// source is checked unchanged after the copy (size, modification time), and recovery compares a
/// copy with its recorded digest before it trusts it.
package final class CopyHashFollower: @unchecked Sendable {
    // Everything below is guarded by `condition`.
    private let condition = NSCondition()
    private var copiedUpTo: Int64 = 0
    private var copyEnded = false
    private var outcome: Result<(digest: String, hashed: Int64), DeliveryError>?

    private let copy: FileDescriptor
    private let path: String

    /// The most the hashing thread maps (or reads) at once: the resident pages it adds are at most
    /// this many, whatever the file's size.
    static let window = 8 << 20

    private let mapsPages: Bool

    /// Starts the hashing thread for `copy`, the file being written, described as `path` in errors.
    /// - Parameter mapsPages: hash through mappings (false: with `pread`, as on a kernel without
    ///   `MADV_POPULATE_READ`; for tests).
    init(copy: FileDescriptor, path: String, mapsPages: Bool = true) {
        self.copy = copy
        self.path = path
        self.mapsPages = mapsPages
        let thread = Thread { [self] in run() }
        thread.name = "docroute-hash"
        thread.start()
    }

    /// Bytes `0..<offset` of the copy are written.
    func copied(upTo offset: Int64) {
        condition.lock()
        copiedUpTo = offset
        condition.signal()
        condition.unlock()
    }

    /// The copy ended (done, or failed): the thread hashes what was reported, then stops.
    func finish() {
        condition.lock()
        copyEnded = true
        condition.broadcast()
        condition.unlock()
    }

    /// The SHA-256 (lowercase hex) of the bytes reported copied and how many there were; waits
    /// for the thread. Call ``finish()`` first.
    func digest() throws -> (digest: String, hashed: Int64) {
        condition.lock()
        defer { condition.unlock() }
        while outcome == nil { condition.wait() }
        return try outcome!.get()
    }

    private func run() {
        // Allocated only where the kernel cannot populate a mapping.
        var buffer = mapsPages ? nil : UnsafeMutableRawBufferPointer.allocate(byteCount: Self.window, alignment: 4096)
        defer { buffer?.deallocate() }
        var hash = SHA256()
        var hashed: Int64 = 0
        reading: while true {
            condition.lock()
            while copiedUpTo <= hashed && !copyEnded { condition.wait() }
            let limit = copiedUpTo
            let ended = copyEnded
            condition.unlock()
            if limit <= hashed && ended { break reading }
            while hashed < limit {
                let wanted = Int(min(Int64(Self.window), limit - hashed))
                do {
                    if let buffer {
                        let count = try copy.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]), atOffset: hashed)
                        guard count > 0 else {
                            return deliver(.failure(DeliveryError(code: .changed, message: "\(path) ended after \(hashed) bytes while it was being hashed. \(DeliveryError.advice(for: .changed))")))
                        }
                        hash.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                        hashed += Int64(count)
                    } else {
                        try copy.withPopulatedMapping(offset: hashed, count: wanted) { hash.update(bufferPointer: $0) }
                        hashed += Int64(wanted)
                    }
                } catch .invalidArgument where buffer == nil {
                    // No MADV_POPULATE_READ (Linux before 5.14): the rest is read instead.
                    buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.window, alignment: 4096)
                } catch {
                    return deliver(.failure(DeliveryError(errno: error, operation: "read", path: path)))
                }
            }
        }
        deliver(.success((SandboxWriter.hex(hash.finalize()), hashed)))
    }

    private func deliver(_ result: Result<(digest: String, hashed: Int64), DeliveryError>) {
        condition.lock()
        outcome = result
        condition.broadcast()
        condition.unlock()
    }
}
