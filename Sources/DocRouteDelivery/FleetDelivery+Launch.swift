extension FleetDelivery {
    /// Makes the fleet's launch on demand ready before ``FleetLauncher/run()``: `launchable` says
    /// which handlers this host can launch now, `launch` launches one through this host's launcher.
    package func startLaunching(launchable: @escaping @Sendable () -> [String], launch: @escaping @Sendable (String) async -> Void) async {
        await launcher.start(launchable: launchable, launch: launch)
        await dispatcher.forwardWakeUps(to: launcher)
    }
}
