import DocRouteConfiguration
import DocRoutePlatform
import Testing

/// The `[fleet]` table of docroute.toml: every key, its default, and each mistake said with the key and line.
@Suite struct FleetConfigurationTests {
    func parse(_ fleet: String) throws(ConfigurationError) -> DaemonConfiguration {
        try DaemonConfiguration.parse("socket = \"/run/docroute/docroute.sock\"\n\n[fleet]\n" + fleet, file: "docroute.toml")
    }

    func error(_ fleet: String) -> ConfigurationError? {
        do throws(ConfigurationError) {
            _ = try parse(fleet)
            return nil
        } catch {
            return error
        }
    }

    @Test func noFleetTableLeavesTheHostAlone() throws {
        let configuration = try DaemonConfiguration.parse("socket = \"/run/docroute/docroute.sock\"\n", file: "docroute.toml")
        #expect(configuration.fleet == nil)
        #expect(try DaemonConfiguration.embeddedDefault().fleet == nil)
    }

    @Test func everyKeyIsRead() throws {
        let fleet = try #require(try parse("""
            database = "postgresql://router@db.example.net:6543/documents?sslmode=verify-full"
            host_name = "scanner-gateway-2"
            password_file = "docroute-db-password"
            lease_seconds = 12
            ca_file = "/etc/docroute/db-ca.pem"
            retain_days = 7
            """).fleet)
        #expect(fleet.retainDays == 7)
        #expect(fleet.database.endpoint == .tcp(host: "db.example.net", port: 6543))
        #expect(fleet.database.user == "router")
        #expect(fleet.database.database == "documents")
        #expect(fleet.database.tlsMode == .verifyFull)
        #expect(fleet.hostName == "scanner-gateway-2")
        #expect(fleet.passwordFile == "docroute-db-password")
        #expect(fleet.leaseSeconds == 12)
        #expect(fleet.heartbeatSeconds == 4)
        #expect(fleet.caFile == "/etc/docroute/db-ca.pem")
    }

    @Test func defaultsAreTheMachineNameThirtySecondsAndPreferredTLS() throws {
        let fleet = try #require(try parse("database = \"postgresql://db.example.net/docroute\"\n").fleet)
        #expect(fleet.hostName == (try HostName.current()))
        #expect(fleet.leaseSeconds == 30)
        #expect(fleet.retainDays == 0, "bytes deleted with the last acknowledgement, as before retain_days")
        #expect(fleet.passwordFile == nil)
        #expect(fleet.caFile == nil)
        #expect(fleet.database.user == "docroute")
        #expect(fleet.database.endpoint == .tcp(host: "db.example.net", port: 5432))
        #expect(fleet.database.tlsMode == .prefer)
    }

    @Test func theUnixSocketFormNamesTheSocketInTheFolder() throws {
        let fleet = try #require(try parse("database = \"postgresql:///fleet?host=/run/postgresql&user=docroute\"\n").fleet)
        #expect(fleet.database.endpoint == .unixSocket(path: "/run/postgresql/.s.PGSQL.5432"))
        #expect(fleet.database.database == "fleet")
        #expect(fleet.database.tlsMode == .disable)
        let encoded = try #require(try parse("database = \"postgresql://%2Fvar%2Frun%2Fpg:5433/fleet\"\n").fleet)
        #expect(encoded.database.endpoint == .unixSocket(path: "/var/run/pg/.s.PGSQL.5433"))
    }

    @Test func unknownKeysAreErrorsThatListTheKnownOnes() throws {
        let found = try #require(error("database = \"postgresql://db/docroute\"\nlease = 10\n"))
        #expect(found.code == .unknownKey)
        #expect(found.inputKey == "fleet.lease")
        #expect(found.inputLine == 5)
        #expect(found.message.contains("lease_seconds"))
    }

    @Test func mistakesNameTheKeyAndSayWhatToWrite() throws {
        let missing = try #require(error("host_name = \"a\"\n"))
        #expect(missing.code == .missingKey)
        #expect(missing.inputKey == "fleet.database")

        let notURL = try #require(error("database = \"db.example.net\"\n"))
        #expect(notURL.code == .invalidValue)
        #expect(notURL.inputKey == "fleet.database")
        #expect(notURL.message.contains("postgresql://"))

        let password = try #require(error("database = \"postgresql://docroute:hunter2@db/docroute\"\n"))
        #expect(password.code == .invalidValue)
        #expect(password.message.contains("password_file"))
        #expect(!password.description.contains("hunter2"))

        let mode = try #require(error("database = \"postgresql://db/docroute?sslmode=allow\"\n"))
        #expect(mode.message.contains("verify-full"))

        let socketTLS = try #require(error("database = \"postgresql:///docroute?host=/run/postgresql&sslmode=require\"\n"))
        #expect(socketTLS.message.contains("Unix socket"))

        let lease = try #require(error("database = \"postgresql://db/docroute\"\nlease_seconds = 1\n"))
        #expect(lease.code == .invalidValue)
        #expect(lease.inputKey == "fleet.lease_seconds")

        let leaseType = try #require(error("database = \"postgresql://db/docroute\"\nlease_seconds = \"30\"\n"))
        #expect(leaseType.code == .wrongType)

        let relativeCA = try #require(error("database = \"postgresql://db/docroute?sslmode=verify-ca\"\nca_file = \"ca.pem\"\n"))
        #expect(relativeCA.inputKey == "fleet.ca_file")

        let unusedCA = try #require(error("database = \"postgresql://db/docroute\"\nca_file = \"/etc/ca.pem\"\n"))
        #expect(unusedCA.message.contains("sslmode=verify-full"))

        let passwordPath = try #require(error("database = \"postgresql://db/docroute\"\npassword_file = \"secrets/db\"\n"))
        #expect(passwordPath.inputKey == "fleet.password_file")

        let emptyName = try #require(error("database = \"postgresql://db/docroute\"\nhost_name = \"\"\n"))
        #expect(emptyName.inputKey == "fleet.host_name")

        do throws(ConfigurationError) {
            _ = try DaemonConfiguration.parse("fleet = \"postgresql://db/docroute\"\n", file: "docroute.toml")
            Issue.record("fleet as a string was taken")
        } catch {
            #expect(error.code == .wrongType && error.inputKey == "fleet")
        }
    }

    @Test func aChangedFleetTableWaitsForARestart() throws {
        let before = try parse("database = \"postgresql://db/docroute\"\n")
        let after = try parse("database = \"postgresql://db/docroute\"\nlease_seconds = 60\n")
        let reload = before.reloaded(from: after)
        #expect(reload.needsRestart == ["fleet"])
        #expect(reload.configuration.fleet?.leaseSeconds == 30)
        let added = try DaemonConfiguration.parse("socket = \"/run/docroute/docroute.sock\"\n", file: "docroute.toml").reloaded(from: after)
        #expect(added.needsRestart == ["fleet"])
    }

    @Test func retainDaysIsAWholeNumberOfDaysUpToTenYears() throws {
        for bad in ["-1", "3651"] {
            let problem = try #require(error("database = \"postgresql://db.example.net/docroute\"\nretain_days = \(bad)\n"))
            #expect(problem.inputKey == "fleet.retain_days")
            #expect(problem.message.contains("from 0"), "\(problem.message)")
        }
        let typed = try #require(error("database = \"postgresql://db.example.net/docroute\"\nretain_days = \"7\"\n"))
        #expect(typed.inputKey == "fleet.retain_days")
    }
}
