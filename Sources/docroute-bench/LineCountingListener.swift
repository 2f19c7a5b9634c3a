import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The receiving end of the baseline script's notifications: a Unix socket that accepts one
/// connection after another and counts the lines that arrive, noting when the last one did.
final class LineCountingListener: @unchecked Sendable {
    let path: String
    private let fd: Int32
    private let lock = NSLock()
    private var lines = 0
    private var lastLine: UInt64 = 0
    private var stopping = false
    private var finished = false

    init(path: String) throws {
        self.path = path
        fd = try BenchUnixSocket.open(SOCK_STREAM, .bind, path: path)
        guard listen(fd, 512) == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw BenchError("cannot listen on \(path): \(message)")
        }
        Thread { [self] in serve() }.start()
    }

    /// Lines received so far, and the uptime in nanoseconds when the last one arrived.
    var received: (lines: Int, lastAt: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        return (lines, lastLine)
    }

    func stop() {
        lock.lock()
        stopping = true
        lock.unlock()
        while true {
            lock.lock()
            let done = finished
            lock.unlock()
            if done { break }
            usleep(10_000)
        }
        close(fd)
        unlink(path)
    }

    private var isStopping: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopping
    }

    /// One connection at a time, each read to its end: socat sends one line and closes.
    private func serve() {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !isStopping {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let connection = accept(fd, nil, nil)
            guard connection >= 0 else { continue }
            // A client that connects and never writes must not stall the others for long.
            var interval = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
            var newlines = 0
            while true {
                let count = chunk.withUnsafeMutableBytes { read(connection, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                newlines += chunk[..<count].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            }
            close(connection)
            if newlines > 0 {
                let now = DispatchTime.now().uptimeNanoseconds
                lock.lock()
                lines += newlines
                lastLine = now
                lock.unlock()
            }
        }
        lock.lock()
        finished = true
        lock.unlock()
    }
}
