import Synchronization

/// The selection's explanation per type, kept for one ``RoutingSnapshot``: what a document's
/// history says of why it went to its handler, worked out once per type instead of per file.
final class RouteReasons: Sendable {
    private let reasons = Mutex<[String: (winner: String?, reason: String)]>([:])

    /// The winner and the explanation for `contentType` (with `innerContentType`), from `work`
    /// the first time.
    func reason(_ contentType: String, _ innerContentType: String?,
                _ work: () -> (winner: String?, reason: String)) -> (winner: String?, reason: String) {
        let key = innerContentType.map { contentType + "\u{0}" + $0 } ?? contentType
        if let known = reasons.withLock({ $0[key] }) { return known }
        let found = work()
        reasons.withLock { $0[key] = found }
        return found
    }
}
