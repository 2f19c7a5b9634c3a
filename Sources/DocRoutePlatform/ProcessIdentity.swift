import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Who this process is: the user ids the kernel checks it as, and its supplementary groups.
///
/// The ids cannot fail to be read (`getuid(2)` and `geteuid(2)` always succeed), so they are plain
/// values; the groups list can, and throws.
package enum ProcessIdentity {
    /// The effective user id (`geteuid(2)`): whom the kernel checks permissions and ownership
    /// changes against.
    package static var effectiveUserID: UInt32 { geteuid() }

    /// The real user id (`getuid(2)`): who started the process, for messages that say whom a
    /// folder must be writable by.
    package static var realUserID: UInt32 { getuid() }

    /// The supplementary groups of the calling thread (`getgroups(2)`). On Linux they are per
    /// thread at the system-call level, and stay the process's while nobody changes a thread's
    /// own (``ThreadFileSystemIdentity``).
    package static func supplementaryGroups() throws(Errno) -> [UInt32] {
        while true {
            let count = try Errno.retryingOnInterrupt { getgroups(0, nil) }
            var groups = [gid_t](repeating: 0, count: Int(count))
            switch Errno.result(retryingOnInterrupt: { getgroups(count, &groups) }) {
            case .success(let filled): return Array(groups.prefix(Int(filled)))
            // A group was added between the two calls: ask for the count again.
            case .failure(.invalidArgument): continue
            case .failure(let errno): throw errno
            }
        }
    }
}
