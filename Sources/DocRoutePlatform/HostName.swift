import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The machine's name (`gethostname(2)`): what a host is called in a fleet unless the
/// configuration names it.
package enum HostName {
    /// The kernel's host name (the UTS namespace's), up to its first NUL.
    package static func current() throws(Errno) -> String {
        // HOST_NAME_MAX is 64 on Linux; the extra byte keeps a name of exactly that length terminated.
        var buffer = [CChar](repeating: 0, count: 256)
        _ = try Errno.retryingOnInterrupt { gethostname(&buffer, buffer.count - 1) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
