/// The magic section that matched a file's leading bytes.
public struct MIMEMagicMatch: Sendable, Hashable {
    /// The canonical MIME type of the section.
    public var type: String
    /// The section's priority (0–100, default 50); sections are tried from the highest down.
    public var priority: Int

    /// Describes one match.
    public init(type: String, priority: Int) {
        self.type = type
        self.priority = priority
    }
}
