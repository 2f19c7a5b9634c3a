/// The optional requests a daemon names in `welcome`'s `features` (PROTOCOL.md), so a client can
/// tell before it asks. A client must ignore names it does not know.
public enum ProtocolFeature: String, Sendable, Hashable, CaseIterable {
    /// The `candidates` request: every handler that could open a document (Open In…).
    case candidates = "candidates"
    /// `open` with `bundleIdentifier`: the document goes to the user's pick among the candidates.
    case openWith = "open-with"
    /// `open` and `candidates` with `"descriptor":true` and a descriptor passed with `SCM_RIGHTS`.
    case openDescriptor = "open-descriptor"
    /// The `release` request: a quarantined mail attachment delivered from its message.
    case release = "release"
    /// The `history` request: where documents went, from the ledger.
    case history = "history"
    /// The `redeliver` request: acknowledged or declined documents sent to their handlers again.
    case redeliver = "redeliver"
    /// `subscribe` with `"compete":true`: several connections share one handler's deliveries.
    case compete = "compete"
}
