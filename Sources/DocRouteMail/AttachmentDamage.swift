/// What was wrong with an attachment's bytes; empty when nothing was.
public struct AttachmentDamage: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The base64 stopped inside a quantum (or a `=` came after a lone character): bytes are missing.
    public static let truncatedEncoding = AttachmentDamage(rawValue: 1)
    /// The part was not closed by its multipart's boundary: it ran to the end of the input or to an
    /// outer boundary. Its bytes may be whole; the mail is not.
    public static let unterminated = AttachmentDamage(rawValue: 2)
    /// The base64 held characters outside its alphabet (they were skipped).
    public static let invalidCharacters = AttachmentDamage(rawValue: 4)

    /// Whether the decoded bytes are known to be incomplete, not merely sloppily framed.
    public var isContentIncomplete: Bool { contains(.truncatedEncoding) }

    /// `truncated-encoding,unterminated`, or `none`: stable words for logs and annotations.
    public var description: String {
        var words: [String] = []
        if contains(.truncatedEncoding) { words.append("truncated-encoding") }
        if contains(.unterminated) { words.append("unterminated") }
        if contains(.invalidCharacters) { words.append("invalid-characters") }
        return words.isEmpty ? "none" : words.joined(separator: ",")
    }
}
