import CDocRouteClientShim
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One request on the daemon's descriptor socket: a line sent with an open file passed by
/// `SCM_RIGHTS` (PROTOCOL.md, `open-descriptor`), and the reply line read back.
///
/// NIO cannot attach descriptors to stream writes, so this uses a plain socket on a thread of its
/// own, keeping the caller's executor free while the daemon copies the file.
enum DescriptorPassing {
    static func exchange(socketPath: String, line: [UInt8], descriptor: Int32) async throws(DocRouteClientError) -> DaemonMessage {
        let result: Result<DaemonMessage, DocRouteClientError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: blockingExchange(socketPath: socketPath, line: line, descriptor: descriptor))
            }
            thread.name = "docroute-descriptor-request"
            thread.start()
        }
        return try result.get()
    }

    static func blockingExchange(socketPath: String, line: [UInt8], descriptor: Int32) -> Result<DaemonMessage, DocRouteClientError> {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return .failure(failure(.connectFailed, "cannot make a socket", errno)) }
        defer { close(socket) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(socketPath.utf8)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else {
            return .failure(failure(.connectFailed, "the descriptor socket path \(socketPath) is too long", ENAMETOOLONG))
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path)
            raw[path.count] = 0
        }
        var connected: Int32
        repeat {
            connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        } while connected != 0 && errno == EINTR
        guard connected == 0 else {
            return .failure(failure(.connectFailed, "cannot connect to docrouted's descriptor socket at \(socketPath)", errno))
        }
        // The descriptor travels with the first byte; the rest of a long line follows plainly.
        let first = line.withUnsafeBytes { docroute_client_send_with_descriptor(socket, $0.baseAddress, $0.count, descriptor) }
        guard first > 0 else { return .failure(failure(.connectionClosed, "cannot pass the file to docrouted", errno)) }
        var sent = first
        while sent < line.count {
            let count = line.withUnsafeBytes { Glibc.send(socket, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(failure(.connectionClosed, "cannot send the request to docrouted", errno))
            }
            sent += count
        }
        var framer = LineFramer()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(failure(.connectionClosed, "the reply from docrouted could not be read", errno))
            }
            let frames = count == 0 ? framer.finish().map { [$0] } ?? [] : framer.feed(buffer[..<count])
            for frame in frames {
                guard case .line(let bytes) = frame else { continue }
                do {
                    return .success(try DaemonMessage(decoding: bytes))
                } catch {
                    return .failure(DocRouteClientError(code: .unreadableMessage, message: "docrouted's reply could not be read: \(error.message)", cause: error))
                }
            }
            if count == 0 {
                return .failure(DocRouteClientError(code: .connectionClosed, message: "docrouted closed the descriptor socket without a reply"))
            }
        }
    }

    static func failure(_ code: DocRouteClientError.Code, _ message: String, _ number: Int32) -> DocRouteClientError {
        DocRouteClientError(code: code, message: "\(message): \(String(cString: strerror(number)))")
    }
}
