/// The outcome of choosing a handler: the winner (or none), the candidates in the order
/// considered, and one line saying why.
public struct HandlerSelection: Sendable, Hashable {
    /// The type (or URL scheme) that was routed.
    public var input: String
    /// The winner's bundle identifier, nil when nothing claims the input.
    public var bundleIdentifier: String?
    public var candidates: [HandlerCandidate]
    public var reason: String
}
