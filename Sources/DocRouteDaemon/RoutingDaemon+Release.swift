import DocRouteIntake
import DocRouteProtocol

/// `release` (docs/PROTOCOL.md, proposal): a quarantined mail attachment delivered from its
/// message, which intake reads again from the Maildir.
extension RoutingDaemon {
    /// The reply to `release` of the quarantine entry at `path`.
    nonisolated func release(_ path: String, bundleIdentifier: String?, id: String?) async -> DaemonMessage {
        switch await intake.releaseMailPart(entryPath: path, pick: bundleIdentifier) {
        case .delivered(let deliveryID, let bundle, let contentType, _):
            return .released(id: id, path: path, deliveryID: deliveryID, bundleIdentifier: bundle, contentType: contentType)
        case .alreadyDelivered:
            return .released(id: id, path: path, deliveryID: nil, bundleIdentifier: nil, contentType: nil)
        case .refused(let code, let message):
            return .error(id: id, code: code, message: message)
        }
    }
}
