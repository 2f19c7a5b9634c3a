import DocRoutePlatform
import SystemPackage
import TOMLKit

extension DaemonConfiguration {
    static let fleetKeys: Set<String> = ["database", "host_name", "password_file", "lease_seconds", "ca_file", "retain_days"]

    /// Reads the `[fleet]` table; every error names `fleet.<key>` and its line.
    static func parseFleet(_ value: any TOMLValueConvertible, file: String, locator: KeyLocator) throws(ConfigurationError) -> FleetConfiguration {
        func fail(_ code: ConfigurationError.Code, _ key: String, _ message: String) -> ConfigurationError {
            ConfigurationError(code: code, inputFile: file, inputLine: locator.line(of: "fleet." + key), inputKey: "fleet." + key, message: message)
        }
        guard let table = value.table else {
            throw ConfigurationError(code: .wrongType, inputFile: file, inputLine: locator.line(of: "fleet"), inputKey: "fleet",
                                     message: "expected a [fleet] table, found \(value.type)")
        }
        for key in table.keys where !fleetKeys.contains(key) {
            throw fail(.unknownKey, key, "unknown key; [fleet] has \(fleetKeys.sorted().joined(separator: ", "))")
        }
        func string(_ key: String) throws(ConfigurationError) -> String? {
            guard let value = table[key] else { return nil }
            guard let string = value.string else { throw fail(.wrongType, key, "expected a string, found \(value.type)") }
            return string
        }
        guard let databaseText = try string("database") else {
            throw ConfigurationError(code: .missingKey, inputFile: file, inputLine: locator.line(of: "fleet"), inputKey: "fleet.database",
                                     message: "required in [fleet]: the PostgreSQL database the fleet shares, e.g. postgresql://docroute@db.example.net/docroute?sslmode=verify-full")
        }
        let database: FleetDatabaseAddress
        do throws(FleetDatabaseAddress.Problem) {
            database = try FleetDatabaseAddress.parse(databaseText)
        } catch {
            throw fail(.invalidValue, "database", error.message)
        }
        let hostName: String
        if let named = try string("host_name") {
            hostName = named
        } else {
            do throws(Errno) {
                hostName = try HostName.current()
            } catch {
                throw fail(.missingKey, "host_name", "the machine's name cannot be read (\(error)); set host_name")
            }
        }
        guard !hostName.isEmpty, hostName.utf8.count <= 255, !hostName.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw fail(.invalidValue, "host_name", "'\(hostName)' cannot name a host: give 1 to 255 bytes without control characters")
        }
        var fleet = FleetConfiguration(database: database, hostName: hostName)
        if let passwordFile = try string("password_file") {
            guard !passwordFile.isEmpty, passwordFile.hasPrefix("/") || !passwordFile.contains("/") else {
                throw fail(.invalidValue, "password_file", "'\(passwordFile)' must be an absolute path, or a credential's name (LoadCredential=) without '/'")
            }
            fleet.passwordFile = passwordFile
        }
        if let value = table["lease_seconds"] {
            guard let seconds = value.int else { throw fail(.wrongType, "lease_seconds", "expected an integer, found \(value.type)") }
            guard (3...3_600).contains(seconds) else {
                throw fail(.invalidValue, "lease_seconds", "must be from 3 to 3600: a host beats every third of it, and a dead host's work waits that long")
            }
            fleet.leaseSeconds = seconds
        }
        if let value = table["retain_days"] {
            guard let days = value.int else { throw fail(.wrongType, "retain_days", "expected an integer, found \(value.type)") }
            guard (0...3_650).contains(days) else {
                throw fail(.invalidValue, "retain_days", "must be from 0 (delete a document's bytes once it is acknowledged) to 3650 days")
            }
            fleet.retainDays = days
        }
        if let caFile = try string("ca_file") {
            guard caFile.hasPrefix("/") else { throw fail(.invalidValue, "ca_file", "'\(caFile)' must be an absolute path") }
            guard database.tlsMode == .verifyCA || database.tlsMode == .verifyFull else {
                throw fail(.invalidValue, "ca_file", "is used only to verify the server: add sslmode=verify-full (or verify-ca) to database, or remove ca_file")
            }
            fleet.caFile = caFile
        }
        return fleet
    }
}
