import DocRouteConfiguration
import Foundation
import PostgresNIO

/// How this host reaches the fleet's PostgreSQL database: the connection settings made once from
/// `[fleet]` and the password, and each connection's failure said as a ``FleetError``.
package struct FleetDatabase: Sendable {
    package let configuration: FleetConfiguration
    let connection: PostgresConnection.Configuration
    /// Where it connects, for messages: the URL as written (it holds no password).
    package var address: String { configuration.database.text }

    /// Settings for `configuration` with `password` (from ``FleetPassword``); the TLS context is
    /// made here, so an unreadable `ca_file` is found before the first connection.
    package init(configuration: FleetConfiguration, password: String?) throws(FleetError) {
        self.configuration = configuration
        let database = configuration.database
        var settings: PostgresConnection.Configuration
        switch database.endpoint {
        case .unixSocket(let path):
            settings = .init(unixSocketPath: path, username: database.user, password: password, database: database.database)
        case .tcp(let host, let port):
            let tls: PostgresConnection.Configuration.TLS
            do {
                tls = try Self.tls(database.tlsMode, caFile: configuration.caFile)
            } catch {
                throw FleetError(code: .tls, message: "TLS for \(database.text) cannot be set up: \(error); check ca_file (a PEM file of certificates)")
            }
            settings = .init(host: host, port: port, username: database.user, password: password, database: database.database, tls: tls)
            if database.tlsMode == .verifyFull { settings.options.tlsServerName = host }
        }
        // A host that does not answer is said so within seconds, not after the kernel's minutes.
        settings.options.connectTimeout = .seconds(10)
        connection = settings
    }

    static func tls(_ mode: FleetDatabaseAddress.TLSMode, caFile: String?) throws -> PostgresConnection.Configuration.TLS {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch mode {
        case .disable: return .disable
        case .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if let caFile {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
        }
        let context = try NIOSSLContext(configuration: tls)
        return mode == .prefer ? .prefer(context) : .require(context)
    }

    /// A new connection, authenticated; its failure said in words. `synchronousCommit` false makes
    /// its commits return before PostgreSQL has their WAL on disk (the session's
    /// `synchronous_commit`, set at start-up): for what a crash of the server may lose without
    /// harm, see ``FleetQueue/init(database:hostName:synchronousCommit:logger:)``.
    package func connect(logger: Logger, synchronousCommit: Bool = true) async throws(FleetError) -> PostgresConnection {
        var settings = connection
        if !synchronousCommit { settings.options.additionalStartupParameters.append(("synchronous_commit", "off")) }
        do {
            return try await PostgresConnection.connect(configuration: settings, id: 1, logger: logger)
        } catch {
            throw explain(error)
        }
    }

    /// Runs `body` on a new connection and closes it afterwards.
    package func withConnection<T: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> T) async throws(FleetError) -> T {
        let connection = try await connect(logger: logger)
        do {
            let result = try await body(connection)
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw explain(error)
        }
    }

    /// Any error of a connection or a query said as a ``FleetError``: the SQLSTATE of a server's
    /// refusal decides the code; a socket that cannot be reached is `unreachable`.
    package func explain(_ error: any Error) -> FleetError {
        if let fleet = error as? FleetError { return fleet }
        let database = configuration.database
        let user = database.user
        let detail = String(reflecting: error)
        guard let psql = error as? PSQLError else {
            if detail.contains("NIOSSL") || detail.contains("SSL") {
                return FleetError(code: .tls, message: "TLS with \(address) failed (\(error)); check sslmode and ca_file against the server's certificate")
            }
            return unreachable(String(describing: error))
        }
        if psql.code == .server, let info = psql.serverInfo {
            let state = info[.sqlState] ?? ""
            let said = info[.message] ?? "refused"
            switch state {
            case "28P01", "28000":
                let password = configuration.passwordFile == nil
                    ? "no password_file is set; add one holding the role's password"
                    : "check the password in password_file (\(configuration.passwordFile!)) and the role's entry in pg_hba.conf"
                return FleetError(code: .authenticationFailed, message: "\(address): the server refused role \(user): \(said); \(password)")
            case "3D000":
                return FleetError(code: .noDatabase, message: "\(address): the database \(database.database) does not exist: \(said); create it (createdb -O \(user) \(database.database)) or fix database")
            case "42501":
                return FleetError(code: .permissionDenied, message: "\(address): role \(user) may not do this: \(said); GRANT it what the README's \"Running a fleet\" lists, or make it the database's owner")
            case "57P03", "57P01", "53300":
                return unreachable("\(said) (SQLSTATE \(state))")
            default:
                return FleetError(code: .database, message: "\(address): \(said) (SQLSTATE \(state))")
            }
        }
        switch psql.code {
        case .sslUnsupported:
            return FleetError(code: .tls, message: "\(address) offers no TLS and sslmode=\(database.tlsMode.rawValue) requires it; enable ssl on the server or change sslmode")
        case .failedToAddSSLHandler, .receivedUnencryptedDataAfterSSLRequest:
            return FleetError(code: .tls, message: "TLS with \(address) could not be set up; check sslmode and ca_file")
        case .authMechanismRequiresPassword:
            return FleetError(code: .authenticationFailed, message: "\(address): the server asks role \(user) for a password and no password_file is set; add one")
        case .unsupportedAuthMechanism, .saslError:
            return FleetError(code: .authenticationFailed, message: "\(address): authentication of role \(user) failed; check password_file and pg_hba.conf")
        default:
            if let underlying = psql.underlying, String(reflecting: underlying).contains("SSL") {
                return FleetError(code: .tls, message: "TLS with \(address) failed (\(underlying)); check sslmode and ca_file against the server's certificate")
            }
            return unreachable(psql.underlying.map { String(describing: $0) } ?? psql.code.description)
        }
    }

    func unreachable(_ detail: String) -> FleetError {
        // NIO's words for the usual causes are long; these are what an admin looks for.
        let causes = [("Connection refused", "connection refused"), ("No such file or directory", "no socket there"),
                      ("connectTimeout", "no answer within 10 s"), ("No route to host", "no route to host"),
                      ("Network is unreachable", "network unreachable")]
        let why = causes.first { detail.contains($0.0) }?.1 ?? detail
        return FleetError(code: .unreachable, message: "no PostgreSQL answers at \(address) (\(why)); check that the server runs and listens there, and the firewall between")
    }
}

/// Said as its address alone: the connection settings hold the password, which a description
/// made by reflection (a service group's debug log of its services) would print.
extension FleetDatabase: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String { "FleetDatabase(\(address))" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: ["address": address]) }
}
