import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The benchmark's Unix sockets (the baseline's listener, the readiness socket, the protocol
/// client): made and bound to, or connected to, a path by one function.
enum BenchUnixSocket {
    /// What is done with the path.
    enum Use: Equatable {
        /// Bound to it, after removing what an earlier run left there.
        case bind
        /// Connected to it.
        case connect
    }

    /// A Unix socket of `type` (`SOCK_STREAM`, `SOCK_DGRAM`) bound or connected to `path`. On
    /// failure the socket is closed and the error names the step, the path and the system's text.
    static func open(_ type: __socket_type, _ use: Use, path: String) throws -> Int32 {
        if use == .bind { unlink(path) }
        let fd = socket(AF_UNIX, Int32(type.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { use == .bind ? bind(fd, $0, length) : connect(fd, $0, length) }
        }
        guard result == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw BenchError("cannot \(use == .bind ? "bind" : "connect to") \(path): \(message)")
        }
        return fd
    }
}
