import ArgumentParser
import DocRouteClient

extension DocRouteClientError {
    /// Tells the user on standard error what failed and what to do, and gives the exit code.
    ///
    /// - Parameters:
    ///   - action: what the command was doing, as in "cannot \(action)".
    ///   - status: the exit status to return.
    func report(_ action: String, status: Int32 = ExitCode.failure.rawValue) -> ExitCode {
        // A failed connect already says so, with the path and what to check.
        var line = code == .connectFailed ? message : "cannot \(action): \(self.code): \(message)"
        if let hint { line += "\n  " + hint }
        StandardStreams.error(line)
        return ExitCode(status)
    }

    private var hint: String? {
        switch code {
        case .daemon(.unknownHandler):
            "`docroutectl handlers` lists the registered bundle identifiers."
        case .daemon(.notPermitted):
            "Subscribe as the handler's DocRouteUser (or root); status is for root and the admin_group."
        case .daemon(.alreadySubscribed):
            "Another connection is that handler already; stop it first (`docroutectl status` shows it subscribed)."
        case .daemon(.noHandler):
            "`docroutectl route` shows which handlers were considered and why."
        case .daemon(.overLimit):
            "docrouted limits what one user may open per minute, and what may wait for a handler unacknowledged (docroute.toml(5)); try again later, as the message says."
        case .connectionClosed:
            "docrouted went away; documents not acknowledged stay owed and come again on the next subscription."
        default:
            nil
        }
    }
}
