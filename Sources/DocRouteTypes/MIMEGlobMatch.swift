/// A glob rule that matched a file name.
public struct MIMEGlobMatch: Sendable, Hashable {
    /// The canonical MIME type the rule maps to.
    public var type: String
    /// The rule's weight (0–100, default 50); higher wins.
    public var weight: Int
    /// The pattern as written in `globs2`, e.g. `*.tar.gz`.
    public var pattern: String
    /// Whether the rule carries the `cs` flag and so matched the name's exact case.
    public var caseSensitive: Bool

    /// Describes one matching rule.
    public init(type: String, weight: Int, pattern: String, caseSensitive: Bool = false) {
        self.type = type
        self.weight = weight
        self.pattern = pattern
        self.caseSensitive = caseSensitive
    }
}
