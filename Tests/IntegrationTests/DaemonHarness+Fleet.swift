import DocRouteTestSupport
import Foundation

extension DaemonHarness {
    /// A host of a fleet: a harness whose docroute.toml has `[fleet]` with `database`,
    /// `host_name` and, when given, `lease_seconds`, and a password file beside it holding
    /// `password` (none written when nil, for the tests of a missing one).
    static func fleetHost(_ name: String, database: String, password: String?, leaseSeconds: Int? = nil, extra: String = "",
                          launchCommands: Bool = false) throws -> DaemonHarness {
        let harness = try DaemonHarness(extraConfig: """
            [fleet]
            database = "\(database)"
            host_name = "\(name)"
            password_file = "{PASSWORD_FILE}"
            \(leaseSeconds.map { "lease_seconds = \($0)" } ?? "")
            \(extra)
            """, launchCommands: launchCommands)
        let file = harness.root + "/db-password"
        if let password { try (password + "\n").write(toFile: file, atomically: true, encoding: .utf8) }
        let text = try String(contentsOfFile: harness.configPath, encoding: .utf8).replacingOccurrences(of: "{PASSWORD_FILE}", with: file)
        try text.write(toFile: harness.configPath, atomically: true, encoding: .utf8)
        return harness
    }
}
