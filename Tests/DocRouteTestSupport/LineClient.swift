import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A protocol client written against PROTOCOL.md with nothing but a socket and a JSON parser:
/// sends one JSON object per line, reads JSON lines with a timeout.
public final class LineClient: @unchecked Sendable {
    /// The connected socket; ``close()`` closes it.
    public let fd: Int32
    var buffer: [UInt8] = []

    /// Connects to the Unix socket at `path`; reads give up after `timeout` seconds of silence.
    public init(path: String, timeout: TimeInterval = 10) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(fd)
            throw TestSupportError("socket path too long for sockaddr_un (\(bytes.count) bytes): \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        var result: Int32
        repeat {
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        } while result != 0 && errno == EINTR
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw TestSupportError("connect \(path): \(String(cString: strerror(code)))")
        }
        setTimeout(timeout)
    }

    /// Takes over a connected stream socket (one end of a `socketpair`, say); ``close()`` closes it.
    public init(descriptor: Int32, timeout: TimeInterval = 10) {
        fd = descriptor
        setTimeout(timeout)
    }

    /// How long a read waits for the next bytes before it gives up.
    public func setTimeout(_ timeout: TimeInterval) {
        let whole = Int(timeout)
        var interval = timeval(tv_sec: whole, tv_usec: Int((timeout - Double(whole)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends `object` as one JSON line.
    public func send(_ object: [String: Any]) throws {
        var data = try JSONSerialization.data(withJSONObject: object, options: [.withoutEscapingSlashes])
        data.append(0x0A)
        try sendRaw(Array(data))
    }

    /// Sends bytes exactly as given.
    public func sendRaw(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw TestSupportError("send: \(String(cString: strerror(errno)))") }
            offset += written
        }
    }

    /// The next line as raw text (without its newline), or nil on timeout or close.
    public func readLineText() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return String(decoding: line, as: UTF8.self)
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// The next message as a JSON object, or nil on timeout, close, or a line that is not an object.
    public func readMessage() -> [String: Any]? {
        guard let text = readLineText(), let data = text.data(using: .utf8) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    /// Messages until none comes within the timeout (or the connection closes).
    public func readMessages(upTo limit: Int = .max) -> [[String: Any]] {
        var messages: [[String: Any]] = []
        while messages.count < limit, let message = readMessage() { messages.append(message) }
        return messages
    }

    /// The next line, waited for on a thread of its own: an async test must not hold one of the
    /// cooperative pool's few threads (two on a two-core machine) in a blocking read while the
    /// code under test needs them to send what it waits for (see ``runBlocking(_:)``).
    public func nextLineText() async -> String? {
        try? await runBlocking { self.readLineText() }
    }

    /// ``readMessage()`` for async tests (see ``nextLineText()``).
    public func nextMessage() async -> [String: Any]? {
        guard let text = await nextLineText(), let data = text.data(using: .utf8) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    /// ``readMessages(upTo:)`` for async tests (see ``nextLineText()``).
    public func nextMessages(upTo limit: Int = .max) async -> [[String: Any]] {
        var messages: [[String: Any]] = []
        while messages.count < limit, let message = await nextMessage() { messages.append(message) }
        return messages
    }

    /// Connects to `path` again and again until `stopping()` holds: each connection is given to
    /// `serve`, then closed; a connection refused (the daemon gone, or not back yet) is tried
    /// again 50 ms later. For a handler that stays subscribed through restarts of the daemon.
    public static func reconnecting(to path: String, timeout: TimeInterval, until stopping: () -> Bool, _ serve: (LineClient) -> Void) {
        while !stopping() {
            guard let client = try? LineClient(path: path, timeout: timeout) else {
                usleep(50_000)
                continue
            }
            serve(client)
            client.close()
            usleep(20_000)
        }
    }

    /// Whether the other end closed the connection (or it failed), told without reading: after a
    /// read gave up, this tells a timeout from a daemon gone away.
    public var isClosedByPeer: Bool {
        var byte: UInt8 = 0
        let peeked = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    public func close() {
        Glibc.close(fd)
    }
}
