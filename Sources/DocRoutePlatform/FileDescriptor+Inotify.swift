import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension FileDescriptor {
    /// A new inotify instance (`inotify_init1(2)`), close-on-exec, and non-blocking when asked
    /// (one read by an event loop that waits for readiness itself).
    package static func inotify(nonBlocking: Bool) throws(Errno) -> FileDescriptor {
        let flags = IN_CLOEXEC | (nonBlocking ? IN_NONBLOCK : 0)
        return FileDescriptor(rawValue: try Errno.retryingOnInterrupt { inotify_init1(Int32(flags)) })
    }

    /// `inotify_add_watch(2)` of `path` on this inotify instance: the watch descriptor its events
    /// carry. Watching an inode that is watched already changes that watch's mask and returns its
    /// descriptor.
    package func addInotifyWatch(path: String, mask: InotifyMask) throws(Errno) -> Int32 {
        try Errno.retryingOnInterrupt { inotify_add_watch(self.rawValue, path, mask.rawValue) }
    }

    /// `inotify_rm_watch(2)`: ends one watch of this inotify instance. `EINVAL` means the kernel
    /// ended it already (its folder went away), which is what was asked: not an error.
    package func removeInotifyWatch(_ watch: Int32) throws(Errno) {
        do throws(Errno) {
            _ = try Errno.retryingOnInterrupt { inotify_rm_watch(self.rawValue, watch) }
        } catch .invalidArgument {
            return
        }
    }

    /// One `read(2)` of this inotify instance into `buffer`, again after `EINTR`: the events it
    /// held; none when nothing was queued (a non-blocking instance reports `EAGAIN` then).
    package func readInotifyRecords(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> [InotifyRecord] {
        let result = Errno.result(retryingOnInterrupt: { Glibc.read(self.rawValue, buffer.baseAddress, buffer.count) })
        switch result {
        case .success(let count): return InotifyRecord.decode(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        case .failure(.resourceTemporarilyUnavailable): return []
        case .failure(let errno): throw errno
        }
    }
}
