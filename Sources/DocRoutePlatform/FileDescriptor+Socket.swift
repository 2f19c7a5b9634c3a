import CDocRouteShim
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Unix stream sockets, as methods of the descriptor they act on: made, bound, listened on, accepted
// and connected, read with the one descriptor a line may carry, and written without blocking. Each
// call is retried on `EINTR` and throws the `Errno` it failed with.

extension FileDescriptor {
    /// What one ``receive(into:)`` got.
    package enum SocketReceipt: Sendable, Equatable {
        /// Nothing to read now (`EAGAIN`).
        case wouldBlock
        /// The peer closed its end.
        case end
        /// `count` bytes; the descriptor passed with the first of them, if any; `extraDescriptors`
        /// when the sender attached more than one (the kernel dropped the rest).
        case bytes(count: Int, descriptor: FileDescriptor?, extraDescriptors: Bool)
    }

    /// A Unix stream socket, close-on-exec, and non-blocking when asked.
    package static func unixStreamSocket(nonBlocking: Bool) throws(Errno) -> FileDescriptor {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        return FileDescriptor(rawValue: try Errno.retryingOnInterrupt { Glibc.socket(AF_UNIX, type, 0) })
    }

    /// `sockaddr_un` for `path`; `ENAMETOOLONG` when it does not fit (108 bytes on Linux).
    static func unixAddress(_ path: String) throws(Errno) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw .fileNameTooLong }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// The longest socket path `bind` and `connect` take.
    package static var maximumSocketPathLength: Int { MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1 }

    /// `SOCK_STREAM`, for a call that checks a socket's type (`sd_is_socket_unix`).
    package static var streamSocketType: CInt { CInt(SOCK_STREAM.rawValue) }

    /// `bind(2)` to a path.
    package func bind(unixPath path: String) throws(Errno) {
        try Self.retrying(at: path) { Glibc.bind(self.rawValue, $0, $1) }
    }

    /// `listen(2)`.
    package func listen(backlog: Int32) throws(Errno) {
        _ = try Errno.retryingOnInterrupt { Glibc.listen(self.rawValue, backlog) }
    }

    /// `connect(2)` to a path (blocking, for a socket made without `nonBlocking`).
    package func connect(unixPath path: String) throws(Errno) {
        try Self.retrying(at: path) { Glibc.connect(self.rawValue, $0, $1) }
    }

    /// Calls `call` (`bind` or `connect`) with `path` as a `sockaddr_un` and its length, again
    /// while it is interrupted.
    private static func retrying(at path: String, _ call: (UnsafePointer<sockaddr>, socklen_t) -> CInt) throws(Errno) {
        var address = try unixAddress(path)
        _ = try Errno.retryingOnInterrupt {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        }
    }

    /// `accept4(2)` of one waiting connection, non-blocking and close-on-exec; nil when none waits.
    package func acceptConnection() throws(Errno) -> FileDescriptor? {
        switch Errno.result(retryingOnInterrupt: { docroute_accept_nonblocking(self.rawValue) }) {
        case .success(let raw): return FileDescriptor(rawValue: raw)
        case .failure(.wouldBlock): return nil
        // The peer gave up between the kernel's queue and here: nothing to serve.
        case .failure(.connectionAbort): return nil
        case .failure(let errno): throw errno
        }
    }

    /// Who is at the other end (`SO_PEERCRED`): the kernel's word, not the client's.
    package func peerCredentials() throws(Errno) -> PeerCredentials {
        var credentials = docroute_peer_credentials()
        _ = try Errno.retryingOnInterrupt { docroute_peer_credentials_get(self.rawValue, &credentials) }
        return PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }

    /// The path this socket is bound to; nil for an unnamed or abstract socket.
    package func boundUnixPath() -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let found = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(self.rawValue, $0, &length) == 0 }
        }
        guard found, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let pathLength = Int(length) - MemoryLayout.offset(of: \sockaddr_un.sun_path)!
        guard pathLength > 1 else { return nil }
        return withUnsafeBytes(of: address.sun_path) { bytes in
            let raw = bytes.prefix(pathLength)
            guard raw.first != 0 else { return nil }
            return String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// One non-blocking `recvmsg(2)` into `buffer` (up to its count), with room for exactly one
    /// passed descriptor (close-on-exec). The kernel never merges bytes sent with descriptors into
    /// bytes read before them, so a descriptor always comes back with the first byte of the
    /// `sendmsg` that passed it.
    package func receive(into buffer: inout [UInt8]) throws(Errno) -> SocketReceipt {
        var descriptor: CInt = -1
        var truncated: CInt = 0
        // The closure does not throw: a typed-throws closure given to withUnsafeMutableBytes
        // crashes Swift 6.3's IRGen.
        let result = buffer.withUnsafeMutableBytes { raw in
            Errno.result(retryingOnInterrupt: {
                docroute_receive_one_descriptor(self.rawValue, raw.baseAddress, raw.count, &descriptor, &truncated)
            })
        }
        switch result {
        case .success(let count):
            let passed = descriptor >= 0 ? FileDescriptor(rawValue: descriptor) : nil
            if count == 0 && passed == nil && truncated == 0 { return .end }
            return .bytes(count: count, descriptor: passed, extraDescriptors: truncated != 0)
        case .failure(.wouldBlock):
            return .wouldBlock
        case .failure(let errno):
            throw errno
        }
    }

    /// One non-blocking `send(2)` (no `SIGPIPE`); the bytes taken, 0 when the socket's buffer is full.
    package func sendWithoutBlocking(_ bytes: ArraySlice<UInt8>) throws(Errno) -> Int {
        guard !bytes.isEmpty else { return 0 }
        let result = bytes.withUnsafeBytes { raw in
            Errno.result(retryingOnInterrupt: { Glibc.send(self.rawValue, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) })
        }
        switch result {
        case .success(let count): return count
        case .failure(.wouldBlock): return 0
        case .failure(let errno): throw errno
        }
    }

    /// `poll(2)` for readability: true once there is something to read (or the end), false when
    /// `timeoutMilliseconds` passed first. For a short exchange on a socket outside any event loop.
    package func waitUntilReadable(timeoutMilliseconds: Int32) throws(Errno) -> Bool {
        var entry = pollfd(fd: rawValue, events: Int16(POLLIN), revents: 0)
        return try Errno.retryingOnInterrupt { Glibc.poll(&entry, 1, timeoutMilliseconds) } > 0
    }

    /// `shutdown(2)` of both directions: the peer, and a task waiting to read, see the end.
    /// Failure means the socket is not connected any more, which is what was asked.
    package func shutdownBothWays() {
        _ = Glibc.shutdown(rawValue, Int32(SHUT_RDWR))
    }
}
