/// The outcome of choosing a handler: the winner (or none), the candidates in the order
/// considered, and one line saying why.
public struct HandlerSelection: Sendable, Hashable {
    /// The type (or URL scheme) that was routed.
    public var input: String
    /// The winner's bundle identifier, nil when nothing claims the input.
    public var bundleIdentifier: String?
    public var candidates: [HandlerCandidate]
    public var reason: String
    /// The administrator's default that applies to the input (for a type: the one of the nearest
    /// type in its conformance chain that has one), whether it decided or was passed over.
    public var adminDefault: AdminDefaultDecision? = nil
}

/// What became of the administrator's default for a document: it decided, or it was passed over
/// because its handler cannot open the document at all.
public struct AdminDefaultDecision: Sendable, Hashable {
    /// The type (or URL scheme) the default is set for.
    public var key: String
    /// The handler the default names.
    public var bundleIdentifier: String
    /// Whether it chose the handler.
    public var decided: Bool
    /// Why it was passed over (nil when it decided).
    public var passedOverReason: String?
}
