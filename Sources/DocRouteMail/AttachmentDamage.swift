/// What was wrong with an attachment's bytes; empty when nothing was.
package struct AttachmentDamage: OptionSet, Sendable, Hashable, CustomStringConvertible {
    package let rawValue: UInt8

    package init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The base64 stopped inside a quantum and the part was cut short (it was not closed by its
    /// boundary), or a quantum held a single character (six bits: not even one byte): bytes are missing.
    package static let truncatedEncoding = AttachmentDamage(rawValue: 1)
    /// The part was not closed by its multipart's boundary: it ran to the end of the input or to an
    /// outer boundary. Its bytes may be whole; the mail is not.
    package static let unterminated = AttachmentDamage(rawValue: 2)
    /// The base64 held characters outside its alphabet (they were skipped).
    package static let invalidCharacters = AttachmentDamage(rawValue: 4)
    /// The base64's last quantum lacked its `=` padding, in a part that ended properly: every byte
    /// was decoded (as Python's `email` does, adding the padding back), but the encoder was sloppy.
    package static let badPadding = AttachmentDamage(rawValue: 8)

    /// Whether the decoded bytes are known to be incomplete, not merely sloppily framed.
    package var isContentIncomplete: Bool { contains(.truncatedEncoding) }

    /// The stable words, in a fixed order: `truncated-encoding`, `bad-padding`, `unterminated`,
    /// `invalid-characters`. An annotation's `damage` array holds exactly these.
    package var words: [String] {
        var words: [String] = []
        if contains(.truncatedEncoding) { words.append("truncated-encoding") }
        if contains(.badPadding) { words.append("bad-padding") }
        if contains(.unterminated) { words.append("unterminated") }
        if contains(.invalidCharacters) { words.append("invalid-characters") }
        return words
    }

    /// `truncated-encoding,unterminated`, or `none`: the words joined, for logs.
    package var description: String {
        words.isEmpty ? "none" : words.joined(separator: ",")
    }
}
