import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Writes to a stream (a pipe, a terminal, the journal's socket) for callers that decide
// themselves what a short write or `EAGAIN` leads to: the last line a failing process writes.
// Not fault points, unlike the file writes of FileDescriptor+Syscalls.swift, so that a
// `DOCROUTE_FAULT` rule aimed at the daemon's file writes never takes a log line instead.

extension FileDescriptor {
    /// One `write(2)` of `buffer`, again after `EINTR`: how many bytes went (perhaps fewer than
    /// asked); throws the `Errno` of any other failure (`EAGAIN` on a full non-blocking pipe).
    package func writeOnce(from buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try Errno.retryingOnInterrupt { Glibc.write(self.rawValue, buffer.baseAddress, buffer.count) }
    }

    /// `poll(2)` for writability: true once a write can make progress (or fails at once), false
    /// when `timeoutMilliseconds` passed first.
    package func waitUntilWritable(timeoutMilliseconds: Int32) throws(Errno) -> Bool {
        var entry = pollfd(fd: rawValue, events: Int16(POLLOUT), revents: 0)
        return try Errno.retryingOnInterrupt { Glibc.poll(&entry, 1, timeoutMilliseconds) } > 0
    }
}

extension FileDescriptor {
    /// Whether the descriptor is a terminal (`isatty(3)`).
    package var isTerminal: Bool {
        isatty(rawValue) == 1
    }
}
