import DocRouteConfiguration
import Logging
import PostgresNIO

/// What `docrouted --check` says of `[fleet]`: the password file, the connection, the schema's
/// version and what the role may do with it, and the hosts whose handler registries differ from
/// this one's. Nothing is written to the database.
package struct FleetCheck: Sendable {
    package let configuration: FleetConfiguration
    package let environment: [String: String]
    /// This host as it would register (its handlers as loaded now); nil leaves the registries unchecked.
    package let host: FleetHost?

    package init(configuration: FleetConfiguration, environment: [String: String], host: FleetHost? = nil) {
        self.configuration = configuration
        self.environment = environment
        self.host = host
    }

    /// Every finding, in the order the daemon meets them at start.
    package func run(logger: Logger) async -> [ConfigurationCheck.Finding] {
        let subject = "fleet"
        func failed(_ error: FleetError) -> ConfigurationCheck.Finding {
            ConfigurationCheck.Finding(severity: .fatal, subject: subject, message: error.description)
        }
        var findings: [ConfigurationCheck.Finding] = [
            .init(severity: .ok, subject: subject, message: "host \(configuration.hostName), database \(configuration.database.text), lease \(configuration.leaseSeconds) s"),
        ]
        let database: FleetDatabase
        do throws(FleetError) {
            let password = try FleetPassword.read(configuration, environment: environment)
            database = try FleetDatabase(configuration: configuration, password: password)
        } catch {
            return findings + [failed(error)]
        }
        do throws(FleetError) {
            let host = self.host
            let (schema, agreement) = try await database.withConnection(logger: logger) { connection in
                let schema = try await Self.inspect(connection, logger: logger)
                guard let host, schema.version >= 1, schema.version <= FleetSchema.latestVersion else { return (schema, FleetRegistryAgreement?.none) }
                return (schema, FleetRegistryAgreement(host: host, peers: try await FleetRegistryAgreement.peers(of: host.name, on: connection, logger: logger)))
            }
            findings.append(.init(severity: .ok, subject: subject, message: "connected to \(database.address) as \(configuration.database.user)"))
            findings.append(contentsOf: schema.findings(subject: subject, user: configuration.database.user))
            if let agreement {
                findings.append(contentsOf: Self.findings(agreement, subject: subject))
            }
        } catch {
            findings.append(failed(error))
        }
        return findings
    }

    /// One line for the registries that agree, one warning per host whose registry differs.
    static func findings(_ agreement: FleetRegistryAgreement, subject: String) -> [ConfigurationCheck.Finding] {
        let differences = agreement.differences
        let agreeing = agreement.peers.count - differences.count
        var findings: [ConfigurationCheck.Finding] = []
        if agreement.peers.isEmpty {
            findings.append(.init(severity: .ok, subject: subject, message: "no other host registered yet"))
        } else if agreeing > 0 {
            findings.append(.init(severity: .ok, subject: subject, message:
                "\(agreeing) other host\(agreeing == 1 ? "" : "s") load\(agreeing == 1 ? "s" : "") the same \(agreement.host.bundleIdentifiers.count) handlers as this one"))
        }
        findings += differences.map { .init(severity: .warning, subject: subject, message: $0.description) }
        return findings
    }

    /// What was found in the database.
    struct Schema: Sendable {
        var version: Int
        /// May the role create tables in the schema docroute's go to (its search_path's first)?
        var mayCreate: Bool
        /// The schema they go to, for messages.
        var schemaName: String
        /// Tables of the latest version the role may not read and write.
        var deniedTables: [String]

        func findings(subject: String, user: String) -> [ConfigurationCheck.Finding] {
            if version > FleetSchema.latestVersion {
                return [.init(severity: .fatal, subject: subject, message: FleetSchema.newer(version).description)]
            }
            if version < FleetSchema.latestVersion {
                guard mayCreate else {
                    let error = FleetError(code: .permissionDenied, message: """
                        role \(user) may not create tables in schema \(schemaName), and the schema (version \(version)) must be \
                        \(version == 0 ? "created" : "migrated to version \(FleetSchema.latestVersion)") at start; \
                        GRANT CREATE ON SCHEMA \(schemaName) TO \(user), or start once as the database's owner
                        """)
                    return [.init(severity: .fatal, subject: subject, message: error.description)]
                }
                let what = version == 0
                    ? "no docroute schema yet; docrouted creates version \(FleetSchema.latestVersion) at start"
                    : "schema version \(version) is older than this docrouted's \(FleetSchema.latestVersion); docrouted migrates it at start"
                return [.init(severity: .note, subject: subject, message: what)]
            }
            guard deniedTables.isEmpty else {
                let error = FleetError(code: .permissionDenied, message: """
                    role \(user) may not read and write \(deniedTables.joined(separator: ", ")); \
                    GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(schemaName) TO \(user) \
                    (and USAGE ON ALL SEQUENCES)
                    """)
                return [.init(severity: .fatal, subject: subject, message: error.description)]
            }
            return [.init(severity: .ok, subject: subject, message: "schema version \(version), current; role \(user) may read and write it")]
        }
    }

    static func inspect(_ connection: PostgresConnection, logger: Logger) async throws -> Schema {
        let version = try await FleetSchema.version(on: connection, logger: logger)
        var schema = Schema(version: version, mayCreate: false, schemaName: "public", deniedTables: [])
        let rows = try await connection.query(
            "SELECT coalesce(current_schema(), 'public'), coalesce(has_schema_privilege(current_schema(), 'CREATE'), false)", logger: logger)
        for try await (name, mayCreate) in rows.decode((String, Bool).self) {
            schema.schemaName = name
            schema.mayCreate = mayCreate
        }
        if version == FleetSchema.latestVersion {
            for table in FleetSchema.tables + [FleetSchema.versionTable] {
                let allowed = try await connection.query(
                    "SELECT has_table_privilege(\(table), 'SELECT, INSERT, UPDATE, DELETE')", logger: logger)
                for try await may in allowed.decode(Bool.self) where !may { schema.deniedTables.append(table) }
            }
            for sequence in FleetSchema.sequences {
                let allowed = try await connection.query("SELECT has_sequence_privilege(\(sequence), 'USAGE')", logger: logger)
                for try await may in allowed.decode(Bool.self) where !may { schema.deniedTables.append(sequence) }
            }
        }
        return schema
    }
}
