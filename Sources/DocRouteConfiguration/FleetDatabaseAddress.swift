import Foundation

/// The `database` key of `[fleet]` read: `postgresql://[user@]host[:port]/database[?sslmode=…]`, or
/// the Unix-socket form `postgresql:///database?host=/run/postgresql` (libpq's spelling; the
/// socket is `.s.PGSQL.<port>` in that folder unless the path names the socket itself).
package struct FleetDatabaseAddress: Sendable, Hashable, CustomStringConvertible {
    /// libpq's `sslmode`, the ones docrouted can honour.
    package enum TLSMode: String, Sendable, Hashable, CaseIterable {
        /// No TLS.
        case disable
        /// TLS when the server offers it, unverified; plain otherwise (libpq's default).
        case prefer
        /// TLS or no connection; the certificate is not verified.
        case require
        /// TLS, the certificate chaining to `ca_file` (or the system's authorities); any name.
        case verifyCA = "verify-ca"
        /// As verify-ca, and the certificate must name the host connected to.
        case verifyFull = "verify-full"
    }

    /// Where to connect.
    package enum Endpoint: Sendable, Hashable {
        case tcp(host: String, port: Int)
        /// The socket file's path.
        case unixSocket(path: String)
    }

    package var endpoint: Endpoint
    /// The role to log in as; `docroute` when the URL names none.
    package var user: String
    /// The database; the user's name when the URL names none, as libpq does.
    package var database: String
    package var tlsMode: TLSMode
    /// The URL as written (it holds no password: one is refused).
    package var text: String

    package var description: String { text }

    /// Why a `database` value cannot be used: said with what to write instead.
    package struct Problem: Error, Sendable {
        package var message: String
    }

    /// Reads a `database` value.
    package static func parse(_ text: String) throws(Problem) -> FleetDatabaseAddress {
        let schemes = ["postgresql://", "postgres://"]
        guard let scheme = schemes.first(where: { text.hasPrefix($0) }) else {
            throw Problem(message: "'\(text)' is not a PostgreSQL URL; write postgresql://USER@HOST:PORT/DATABASE, or postgresql:///DATABASE?host=/run/postgresql for a Unix socket")
        }
        var rest = Substring(text.dropFirst(scheme.count))
        var queryText: Substring = ""
        if let question = rest.firstIndex(of: "?") {
            queryText = rest[rest.index(after: question)...]
            rest = rest[..<question]
        }
        var authority = rest
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            path = rest[rest.index(after: slash)...]
        }
        var user: String?
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            guard !userInfo.contains(":") else {
                throw Problem(message: "the URL holds a password, which would then be in the configuration and in every message naming the database; remove it and put the password in the file named by password_file")
            }
            user = try decode(userInfo)
        }
        var host: String?
        var port: Int?
        if !authority.isEmpty {
            var hostPart = authority
            if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
                // An IPv6 literal, [::1]:5432.
                hostPart = authority[authority.index(after: authority.startIndex)..<close]
                let after = authority[authority.index(after: close)...]
                if after.hasPrefix(":") { port = try portNumber(after.dropFirst()) }
            } else if let colon = authority.lastIndex(of: ":") {
                hostPart = authority[..<colon]
                port = try portNumber(authority[authority.index(after: colon)...])
            }
            host = try decode(hostPart)
        }
        var database = path.isEmpty ? nil : try decode(path)
        var tlsMode: TLSMode?
        for pair in queryText.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            let value = parts.count > 1 ? try decode(parts[1]) : ""
            switch name {
            case "host": host = value
            case "port": port = try portNumber(Substring(value))
            case "user": user = value
            case "dbname": database = value
            case "sslmode":
                guard let mode = TLSMode(rawValue: value) else {
                    throw Problem(message: "sslmode '\(value)' is not one docrouted supports; use \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                tlsMode = mode
            case "password":
                throw Problem(message: "the URL holds a password, which would then be in the configuration and in every message naming the database; remove it and put the password in the file named by password_file")
            default:
                throw Problem(message: "the URL parameter '\(name)' is not one docrouted reads; it reads host, port, user, dbname and sslmode (the CA file is the ca_file key)")
            }
        }
        guard let host, !host.isEmpty else {
            throw Problem(message: "'\(text)' names no host; write postgresql://USER@HOST:PORT/DATABASE, or postgresql:///DATABASE?host=/run/postgresql for a Unix socket")
        }
        let role = user ?? "docroute"
        let endpoint: Endpoint
        if host.hasPrefix("/") {
            guard tlsMode == nil || tlsMode == .disable || tlsMode == .prefer else {
                throw Problem(message: "sslmode=\(tlsMode!.rawValue) asks for TLS over a Unix socket, which PostgreSQL never offers; remove sslmode or connect over TCP")
            }
            let last = (host as NSString).lastPathComponent
            endpoint = .unixSocket(path: last.hasPrefix(".s.PGSQL.") ? host : host + "/.s.PGSQL.\(port ?? 5432)")
        } else {
            endpoint = .tcp(host: host, port: port ?? 5432)
        }
        let mode = tlsMode ?? (host.hasPrefix("/") ? .disable : .prefer)
        return FleetDatabaseAddress(endpoint: endpoint, user: role, database: database ?? role, tlsMode: mode, text: text)
    }

    static func decode(_ text: Substring) throws(Problem) -> String {
        guard let decoded = String(text).removingPercentEncoding else {
            throw Problem(message: "'\(text)' has a broken %-escape; write %2F for '/', %40 for '@'")
        }
        return decoded
    }

    static func portNumber(_ text: Substring) throws(Problem) -> Int {
        guard let port = Int(text), (1...65_535).contains(port) else {
            throw Problem(message: "'\(text)' is not a port number (1 to 65535)")
        }
        return port
    }
}
