import DocRouteConfiguration
import DocRouteFleet
import DocRouteTestSupport
import Foundation
import Testing

/// `password_file`: an absolute file, or a credential systemd passed in `$CREDENTIALS_DIRECTORY`;
/// whatever goes wrong is said without the password.
@Suite struct FleetPasswordTests {
    func configuration(_ passwordFile: String?) throws -> FleetConfiguration {
        FleetConfiguration(database: try FleetDatabaseAddress.parse("postgresql://db/docroute"), hostName: "a", passwordFile: passwordFile)
    }

    @Test func anAbsoluteFileIsReadWithoutItsLineEnd() throws {
        try TemporaryFolder.with("pw") { folder in
            let file = folder.string + "/password"
            try "pa ss\n".write(toFile: file, atomically: true, encoding: .utf8)
            #expect(try FleetPassword.read(try configuration(file), environment: [:]) == "pa ss")
            #expect(try FleetPassword.read(try configuration(nil), environment: [:]) == nil)
        }
    }

    @Test func aCredentialNameIsLookedUpInTheCredentialsDirectory() throws {
        try TemporaryFolder.with("pw") { folder in
            try "from-systemd".write(toFile: folder.string + "/docroute-db", atomically: true, encoding: .utf8)
            #expect(try FleetPassword.read(try configuration("docroute-db"), environment: ["CREDENTIALS_DIRECTORY": folder.string]) == "from-systemd")
            let credential = try configuration("docroute-db")
            do throws(FleetError) {
                _ = try FleetPassword.read(credential, environment: [:])
                Issue.record("a credential was read without CREDENTIALS_DIRECTORY")
            } catch {
                #expect(error.code == .passwordFile)
                #expect(error.message.contains("LoadCredential=docroute-db"))
            }
        }
    }

    @Test func aMissingOrEmptyFileIsPasswordFile() throws {
        try TemporaryFolder.with("pw") { folder in
            let file = folder.string + "/password"
            let named = try configuration(file)
            do throws(FleetError) {
                _ = try FleetPassword.read(named, environment: [:])
                Issue.record("a missing file was read")
            } catch {
                #expect(error.code == .passwordFile && error.message.contains("does not exist"))
            }
            try "\n".write(toFile: file, atomically: true, encoding: .utf8)
            do throws(FleetError) {
                _ = try FleetPassword.read(named, environment: [:])
                Issue.record("an empty file was read")
            } catch {
                #expect(error.code == .passwordFile && error.message.contains("empty"))
            }
        }
    }
}
