import DocRouteIntake
import DocRouteServer

/// The activity is what intake and dispatch report to; they see it only through these protocols,
/// which they define, so neither reaches forward in the flow to this target.
extension DaemonActivity: IntakeObserver, DispatchObserver {}
