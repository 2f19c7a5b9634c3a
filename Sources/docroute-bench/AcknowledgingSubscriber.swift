import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A handler that takes every document the moment it arrives: it acknowledges the delivery and
/// notes the file's name and when its message arrived.
final class AcknowledgingSubscriber: @unchecked Sendable {
    let client: BenchClient
    private(set) var names: Set<String> = []
    private(set) var lastAt: UInt64 = 0

    init(socket: String, bundleIdentifier: String = "com.sunsetlakesoftware.molecules") throws {
        client = try BenchClient(path: socket)
        client.setReadTimeout(1)
        client.send(#"{"type":"subscribe","id":"1","bundleIdentifier":"\#(bundleIdentifier)"}"#)
        var reply = client.readLine()
        for _ in 0..<30 where reply == nil && !client.isClosed { reply = client.readLine() }
        guard let reply, BenchClient.field("type", in: reply) == "subscribed" else {
            client.close()
            throw BenchError("the daemon did not accept the subscription")
        }
    }

    /// Reads and acknowledges documents (the `launch` one included) until `count` distinct ones
    /// arrived, nothing came for `stall` seconds, or the daemon closed the connection.
    /// `each` sees every file's name and the uptime (ns) its message arrived.
    func take(until count: Int, stall: Double, progress: (Int) -> Void = { _ in },
              each: (Substring, UInt64) -> Void = { _, _ in }) {
        var lastProgress = DispatchTime.now().uptimeNanoseconds
        var lastReport = lastProgress
        while names.count < count {
            guard let line = client.readLine() else {
                let now = DispatchTime.now().uptimeNanoseconds
                if client.isClosed || Double(now - lastProgress) / 1e9 >= stall { return }
                if now - lastReport > 5_000_000_000 {
                    progress(names.count)
                    lastReport = now
                }
                continue
            }
            let arrived = DispatchTime.now().uptimeNanoseconds
            guard let id = BenchClient.field("deliveryID", in: line) else { continue }
            client.send(#"{"type":"ack","deliveryID":"\#(id)","handled":true}"#)
            guard let url = BenchClient.field("url", in: line) ?? BenchClient.field("UIApplicationLaunchOptionsURLKey", in: line),
                  let slash = url.lastIndex(of: "/") else { continue }
            let name = url[url.index(after: slash)...]
            names.insert(String(name))
            each(name, arrived)
            lastAt = arrived
            lastProgress = arrived
            if arrived - lastReport > 5_000_000_000 {
                progress(names.count)
                lastReport = arrived
            }
        }
    }

    /// Acknowledged documents whose copy is in `sandbox`, complete (`size` bytes).
    func presentIn(_ sandbox: String, size: Int) -> Int {
        names.reduce(0) { total, name in
            var info = stat()
            return total + (lstat(sandbox + "/" + name, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && info.st_size == size ? 1 : 0)
        }
    }

    func close() { client.close() }
}
