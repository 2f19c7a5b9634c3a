import DocRoutePlatform
import DocRouteProtocol
import SystemPackage

extension ConfigurationCheck {
    /// What the daemon listening on the socket says of its configuration: the keys a reload found
    /// changed that it takes only at a restart (`needsRestart` in `status`). Nil when nobody
    /// answers, or the checker may not ask for `status` (root or `admin_group` only).
    static func keysNeedingRestart(ofDaemonAt path: String) -> [String]? {
        guard let socket = try? FileDescriptor.unixStreamSocket(nonBlocking: false) else { return nil }
        defer { socket.closeIgnoringErrors() }
        guard (try? socket.connect(unixPath: path)) != nil else { return nil }
        let request = Array(#"{"type":"status","id":"check"}"#.utf8) + [UInt8(ascii: "\n")]
        guard (try? socket.sendWithoutBlocking(request[...])) == request.count else { return nil }
        var framer = LineFramer()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        // A status reply is one line; two seconds is ample for a daemon that answers at all.
        for _ in 0..<40 {
            guard (try? socket.waitUntilReadable(timeoutMilliseconds: 50)) != nil else { return nil }
            guard case .bytes(let count, let passed, _)? = try? socket.receive(into: &buffer) else { continue }
            passed?.closeIgnoringErrors()
            for case .line(let line) in framer.feed(buffer[..<count]) {
                guard case .status(_, _, _, let extra)? = try? DaemonMessage(decoding: line) else { return nil }
                guard case .array(let keys)? = extra["needsRestart"] else { return [] }
                return keys.compactMap(\.stringValue)
            }
        }
        return nil
    }

    /// A finding for keys the running daemon takes only at a restart, if there are any.
    func restartFinding() -> Finding? {
        guard let keys = Self.keysNeedingRestart(ofDaemonAt: configuration.socket), !keys.isEmpty else { return nil }
        return Finding(severity: .warning, subject: "reload", message: """
            the running docrouted read the configuration again and found \(keys.joined(separator: ", ")) changed: \
            that needs a restart (systemctl restart docroute); inboxes and the other keys were taken at the reload
            """)
    }
}
