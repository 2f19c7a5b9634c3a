extension FleetDispatcher {
    /// Hands every `NOTIFY` on to `launcher` as well: one `LISTEN` connection per host serves both.
    package func forwardWakeUps(to launcher: FleetLauncher) {
        self.launcher = launcher
    }

    /// A `NOTIFY` came: something may be claimable here, or owed to a handler connected nowhere.
    func heardWakeUp() {
        poke()
        launcher?.wake()
    }
}
