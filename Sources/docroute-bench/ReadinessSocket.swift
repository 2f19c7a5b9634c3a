import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A stand-in for systemd's notification socket: the daemon, given its path as `NOTIFY_SOCKET`,
/// sends `READY=1` here once it has recovered, scanned its inboxes and opened its socket.
final class ReadinessSocket: @unchecked Sendable {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = try BenchUnixSocket.open(SOCK_DGRAM, .bind, path: path)
        var interval = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Waits for a datagram with the line `READY=1`; returns the uptime (ns) it arrived, or nil
    /// after `timeout` seconds or when `alive` turns false.
    func waitForReady(timeout: Double, alive: () -> Bool) -> UInt64? {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeout * 1e9)
        var datagram = [UInt8](repeating: 0, count: 4096)
        while DispatchTime.now().uptimeNanoseconds < deadline {
            let count = datagram.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                let text = String(decoding: datagram[..<count], as: UTF8.self)
                if text.split(separator: "\n").contains("READY=1") { return DispatchTime.now().uptimeNanoseconds }
            } else if !alive() {
                return nil
            }
        }
        return nil
    }

    func close() {
        Glibc.close(fd)
        unlink(path)
    }
}
