extension MIMEDatabase {
    /// Loads the shared-mime-info database the way ``MIMEDatabaseLoader`` describes, falling
    /// back to ``builtin`` when none is installed.
    ///
    /// - Parameter environment: Usually the process environment; tests pass fixture paths.
    /// - Throws: ``MIMEDatabaseError`` when a database file exists but cannot be read or parsed.
    public static func load(environment: [String: String]) throws -> MIMEDatabase {
        try MIMEDatabaseLoader(environment: environment).load()
    }
}
