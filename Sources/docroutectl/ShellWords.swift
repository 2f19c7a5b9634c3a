/// Splits one string into words the way a POSIX shell does, without expanding anything.
///
/// Blanks separate words; '…' keeps everything literally; "…" keeps everything except that a
/// backslash escapes `"`, `\`, `$` and `` ` ``; outside quotes a backslash keeps the next
/// character. `$`, globs and `~` are not expanded: the words are passed to exec as they are.
enum ShellWords {
    /// A quote that was never closed, or a backslash at the end.
    struct SyntaxError: Error, CustomStringConvertible {
        var description: String
    }

    static func split(_ text: String) throws(SyntaxError) -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var characters = text.makeIterator()
        while let character = characters.next() {
            switch character {
            case " ", "\t", "\n":
                if inWord { words.append(word) }
                word = ""
                inWord = false
            case "'":
                inWord = true
                var closed = false
                while let next = characters.next() {
                    if next == "'" { closed = true; break }
                    word.append(next)
                }
                guard closed else { throw SyntaxError(description: "unterminated ' in \(text)") }
            case "\"":
                inWord = true
                var closed = false
                while let next = characters.next() {
                    if next == "\"" { closed = true; break }
                    if next == "\\" {
                        guard let escaped = characters.next() else { break }
                        if !["\"", "\\", "$", "`"].contains(escaped) { word.append("\\") }
                        word.append(escaped)
                    } else {
                        word.append(next)
                    }
                }
                guard closed else { throw SyntaxError(description: "unterminated \" in \(text)") }
            case "\\":
                guard let escaped = characters.next() else {
                    throw SyntaxError(description: "a backslash ends \(text)")
                }
                inWord = true
                word.append(escaped)
            default:
                inWord = true
                word.append(character)
            }
        }
        if inWord { words.append(word) }
        return words
    }
}
