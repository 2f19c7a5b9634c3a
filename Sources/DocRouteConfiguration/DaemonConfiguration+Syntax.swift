import TOMLKit

extension DaemonConfiguration {
    /// A TOML syntax error named by the mistake behind it. toml++ reports a string left without
    /// its closing quote by what it met instead: the line's end ("unescaped control characters
    /// other than TAB (U+0009) are explicitly prohibited": the newline is one) or the file's end;
    /// those two are said as "unterminated string", on the line where the string starts. Any other
    /// error keeps toml++'s words and position.
    static func syntaxError(_ error: TOMLParseError, text: String, file: String) -> ConfigurationError {
        let description = error.description
        let line = error.source.begin.line
        let literal = description.hasPrefix("Error while parsing literal string")
        guard literal || description.hasPrefix("Error while parsing string") else {
            return ConfigurationError(code: .syntax, inputFile: file, inputLine: line, message: "TOML syntax: \(description)")
        }
        let quote = literal ? "'" : "\""
        // "\r\n" is one Character to Swift: split on both.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        let lineText = line >= 1 && line <= lines.count ? lines[line - 1] : ""
        if description.hasSuffix("control characters other than TAB (U+0009) are explicitly prohibited"),
           error.source.begin.column > lineText.unicodeScalars.count {
            return ConfigurationError(code: .syntax, inputFile: file, inputLine: line, message: """
                unterminated string: the line ends before the closing quote (\(quote)) of the value; add it \
                (a value written over several lines goes between \(quote)\(quote)\(quote) and \(quote)\(quote)\(quote))
                """)
        }
        if description.hasSuffix("encountered end-of-file") {
            // A string on one line starts on the last line; one over several lines at its last `"""`.
            var start = line
            if !lineText.contains(quote) {
                let triple = String(repeating: quote, count: 3)
                if let index = lines.prefix(min(line, lines.count)).lastIndex(where: { $0.contains(triple) }) { start = index + 1 }
            }
            return ConfigurationError(code: .syntax, inputFile: file, inputLine: start, message: """
                unterminated string: the file ends before the closing quote (\(quote)) of the string that starts on line \(start); add it
                """)
        }
        return ConfigurationError(code: .syntax, inputFile: file, inputLine: line, message: "TOML syntax: \(description)")
    }
}
