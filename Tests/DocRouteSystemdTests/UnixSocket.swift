import DocRouteTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A Unix socket bound in a fresh temporary folder, closed and removed by `close()`.
final class UnixSocket {
    let descriptor: CInt
    let path: String
    private let folder: TemporaryFolder

    struct Failure: Error, CustomStringConvertible {
        let call: String
        let errno: CInt
        var description: String { "\(call) failed: \(String(cString: strerror(errno)))" }
    }

    /// - Parameter listening: call `listen()` (stream sockets only).
    init(type: Int32, listening: Bool) throws {
        folder = try TemporaryFolder("systemd-test")
        path = folder.string("socket")
        let fd = socket(AF_UNIX, type | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(call: "socket", errno: errno) }
        descriptor = fd
        var address = Self.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw Failure(call: "bind", errno: errno) }
        if listening, Glibc.listen(fd, 8) != 0 { throw Failure(call: "listen", errno: errno) }
        // Receives must never hang a test run.
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            let bytes = Array(path.utf8.prefix(buffer.count - 1))
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        return address
    }

    /// One datagram as text, or `nil` when none arrives (`MSG_DONTWAIT` with `wait: false`).
    func receiveDatagram(wait: Bool = true) throws -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, wait ? 0 : CInt(MSG_DONTWAIT))
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
            throw Failure(call: "recv", errno: errno)
        }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// Connects a new stream client to `path`; returns its descriptor.
    static func connectClient(to path: String) throws -> CInt {
        let fd = socket(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(call: "socket", errno: errno) }
        var address = address(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let saved = errno
            Glibc.close(fd)
            throw Failure(call: "connect", errno: saved)
        }
        return fd
    }

    func close() {
        Glibc.close(descriptor)
        folder.remove()
    }
}

/// Sets (or with `nil` removes) environment variables for the duration of `body`, restoring them.
func withEnvironment<Result>(_ values: [String: String?], _ body: () throws -> Result) rethrows -> Result {
    var previous: [String: String?] = [:]
    for (name, value) in values {
        previous[name] = getenv(name).map { String(cString: $0) }
        if let value { setenv(name, value, 1) } else { unsetenv(name) }
    }
    defer {
        for (name, value) in previous {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
    }
    return try body()
}

func environmentValue(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}
