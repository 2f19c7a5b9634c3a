import DocRouteErrors

/// A fleet database problem: what is wrong, in words, with what to do.
package typealias FleetError = DocRouteError<FleetErrorCode>

/// Stable codes of ``FleetError``, printed by `docrouted --check` and logged by the daemon.
package struct FleetErrorCode: ErrorCodeProtocol {
    /// The code's text, e.g. `authentication-failed`.
    package let rawValue: String
    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// No PostgreSQL answers at the address (refused, no route, no such socket, timed out).
    package static let unreachable = Self("unreachable")
    /// The server refused the role or its password.
    package static let authenticationFailed = Self("authentication-failed")
    /// `password_file` cannot be read, or is empty.
    package static let passwordFile = Self("password-file")
    /// The database named in the URL does not exist.
    package static let noDatabase = Self("no-database")
    /// The role may not create or use the fleet's tables.
    package static let permissionDenied = Self("permission-denied")
    /// TLS could not be set up: the server offers none where it is required, the certificate is not
    /// trusted, or `ca_file` cannot be read.
    package static let tls = Self("tls")
    /// The database's schema is newer than this docrouted knows.
    package static let schemaNewer = Self("schema-newer")
    /// Any other refusal by the server, with its SQLSTATE.
    package static let database = Self("database")
    /// A document's bytes could not be read from its source (or the source ended before its size),
    /// or not written to a claimed copy: the file's problem, not the database's.
    package static let fileAccess = Self("file-access")

    /// `message (code)`.
    package static func describe(_ error: FleetError) -> String { "\(error.message) (\(error.code.rawValue))" }
}
