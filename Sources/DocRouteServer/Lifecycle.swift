/// Where a component that starts once and stops once is in its life: `initial` → `running` →
/// `shuttingDown` → `finished`, with what it holds while running and while shutting down.
/// `RoutingDaemon` and ``SocketServer`` keep their state in one, so both name it alike in a
/// ``LifecycleError``.
package enum Lifecycle<Running, ShuttingDown> {
    case initial
    case running(Running)
    case shuttingDown(ShuttingDown)
    case finished

    /// The state's name, for errors.
    package var name: String {
        switch self {
        case .initial: "not started"
        case .running: "running"
        case .shuttingDown: "shutting down"
        case .finished: "stopped"
        }
    }
}
