import DocRouteTypes

/// The MIME database docrouted types content with, and why that one: the freedesktop
/// directories found the XDG way, or the built-in table and the reason no installed one was used.
///
/// A directory that exists but cannot be read (a daemon running as its own user with
/// `HOME=/root`) does not silently cost the whole system database: it is skipped, said so in
/// ``explanation``, and the system directories are read on their own.
package struct MIMEDatabaseChoice: Sendable {
    package let database: MIMEDatabase
    /// One sentence for the log and `docrouted --check`: which database, and why.
    package let explanation: String
    /// True when something was skipped or the built-in table stands in for a missing database.
    package let isDegraded: Bool

    package init(environment: [String: String]) {
        let loader = MIMEDatabaseLoader(environment: environment)
        do {
            let database = try loader.load()
            if database.directories.isEmpty {
                self.init(database: database, degraded: true, explanation: """
                    the built-in MIME table: no compiled shared-mime-info database in \
                    \(loader.searchDirectories.joined(separator: ", ")); install shared-mime-info \
                    (apt-get install shared-mime-info) for content typing as GIO does it
                    """)
            } else {
                self.init(database: database, degraded: false, explanation: database.source)
            }
            return
        } catch {
            // Most often the user's own data directory (HOME or XDG_DATA_HOME) is not readable
            // by the daemon's user: read the system directories without it.
            var systemOnly = environment
            systemOnly["HOME"] = nil
            systemOnly["XDG_DATA_HOME"] = nil
            if let database = try? MIMEDatabaseLoader(environment: systemOnly).load(), !database.directories.isEmpty {
                self.init(database: database, degraded: true, explanation: """
                    \(database.source), without the user's directory: \(error); \
                    give docrouted a HOME it can read (systemd: the unit's User= gets its own) to use it
                    """)
            } else {
                self.init(database: .builtin, degraded: true, explanation: """
                    the built-in MIME table, because the installed database cannot be read: \(error); \
                    fix its permissions or run update-mime-database
                    """)
            }
        }
    }

    init(database: MIMEDatabase, degraded: Bool, explanation: String) {
        self.database = database
        self.isDegraded = degraded
        self.explanation = explanation
    }
}
