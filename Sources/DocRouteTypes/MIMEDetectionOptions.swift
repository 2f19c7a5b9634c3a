/// How ``MIMEDatabase/detect(filename:head:options:)`` weighs the name against the content.
public struct MIMEDetectionOptions: Sendable, Hashable {
    /// Whether the file name is consulted at all. `false` sniffs content only.
    public var usesFileName: Bool
    /// When set, a magic match of at least this priority replaces a single glob result that
    /// it is unrelated to (neither is a subclass of the other).
    ///
    /// The spec never lets content override an unambiguous name, and `nil` (the default)
    /// follows it. 80 is the cut-off File::MimeInfo and Qt use for "sure" magic.
    public var contentOverridesNameAtPriority: Int?

    /// Builds options; the defaults follow the spec's recommended checking order.
    public init(usesFileName: Bool = true, contentOverridesNameAtPriority: Int? = nil) {
        self.usesFileName = usesFileName
        self.contentOverridesNameAtPriority = contentOverridesNameAtPriority
    }

    /// The spec's recommended checking order: an unambiguous glob result is final.
    public static let specification = MIMEDetectionOptions()
    /// Ignores the name: magic, then the text/binary fallback.
    public static let contentOnly = MIMEDetectionOptions(usesFileName: false)
}
