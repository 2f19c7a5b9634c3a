import Foundation

extension ManifestReader {
    /// Where a file that is not a property list stops being one, for the message: Foundation
    /// says only "the data is not in the correct format". The line (of an XML property list)
    /// goes in the error's `inputLine`; the text says what was found there.
    struct Unreadable: Equatable {
        var line: Int?
        var detail: String
    }

    /// Looks at the bytes Foundation refused: a binary property list's trailer, or an XML
    /// property list's elements (each tag opened and closed in order, scanned by hand because
    /// Foundation's parser gives no position). Nil when nothing wrong is found that way.
    static func unreadable(_ data: Data) -> Unreadable? {
        let bytes = [UInt8](data)
        if bytes.starts(with: Array("bplist".utf8)) { return unreadableBinary(bytes) }
        return unreadableXML(bytes)
    }

    /// A binary property list whose trailer (its last 32 bytes) does not point inside it.
    static func unreadableBinary(_ bytes: [UInt8]) -> Unreadable? {
        let trailer = bytes.count - 32
        guard trailer >= 8 else {
            return Unreadable(detail: "a binary property list of \(bytes.count) bytes, too short to hold its 32-byte trailer: the file is truncated")
        }
        var tableStart = 0
        for byte in bytes[(trailer + 24)..<(trailer + 32)] { tableStart = tableStart &<< 8 | Int(byte) }
        guard tableStart >= 8, tableStart <= trailer else {
            return Unreadable(detail: "a binary property list of \(bytes.count) bytes whose trailer puts its offset table at byte \(tableStart), outside the file: it is truncated or damaged")
        }
        return nil
    }

    /// The first place an XML property list's elements stop nesting: a closing tag that closes
    /// another element than the one open, a tag never ended, or the end of the file with elements
    /// still open (a truncated file).
    static func unreadableXML(_ bytes: [UInt8]) -> Unreadable? {
        var open: [(name: String, line: Int)] = []
        var line = 1
        var lastClosed: (name: String, line: Int)?
        var index = 0
        let lessThan = UInt8(ascii: "<"), greaterThan = UInt8(ascii: ">"), newline = UInt8(ascii: "\n"), slash = UInt8(ascii: "/")
        func ends(with text: String, at end: Int) -> Bool {
            let suffix = Array(text.utf8)
            return end + 1 >= suffix.count && Array(bytes[(end + 1 - suffix.count)...end]) == suffix
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == newline { line += 1 }
            guard byte == lessThan else {
                index += 1
                continue
            }
            let tagLine = line
            let rest = bytes[index...]
            // Comments, processing instructions and the DOCTYPE end with their own marks.
            let closing: String
            if rest.starts(with: Array("<!--".utf8)) {
                closing = "-->"
            } else if rest.starts(with: Array("<?".utf8)) {
                closing = "?>"
            } else if rest.starts(with: Array("<![CDATA[".utf8)) {
                closing = "]]>"
            } else {
                closing = ">"
            }
            var end = index + 1
            while end < bytes.count, !(bytes[end] == greaterThan && ends(with: closing, at: end)) {
                if bytes[end] == newline { line += 1 }
                end += 1
            }
            guard end < bytes.count else {
                return Unreadable(line: tagLine, detail: "the file ends inside the tag that starts on line \(tagLine): it is truncated")
            }
            if closing == ">", bytes[index + 1] != UInt8(ascii: "!") {
                let inner = bytes[(index + 1)..<end]
                let isClosing = inner.first == slash
                let isEmpty = inner.last == slash
                let nameBytes = (isClosing ? inner.dropFirst() : inner[...]).prefix { byte in
                    byte != slash && byte != UInt8(ascii: " ") && byte != newline && byte != UInt8(ascii: "\t") && byte != UInt8(ascii: "\r")
                }
                let name = String(decoding: nameBytes, as: UTF8.self)
                if isClosing {
                    guard let top = open.popLast() else {
                        return Unreadable(line: tagLine, detail: "</\(name)> on line \(tagLine) closes an element that was never opened")
                    }
                    guard top.name == name else {
                        return Unreadable(line: tagLine, detail: "</\(name)> on line \(tagLine) closes <\(top.name)>, opened on line \(top.line)")
                    }
                    lastClosed = (name, tagLine)
                } else if isEmpty {
                    lastClosed = (name, tagLine)
                } else {
                    open.append((name, tagLine))
                }
            }
            index = end + 1
        }
        guard let innermost = open.last else { return nil }
        let complete = lastClosed.map { "; the last complete element, <\($0.name)>, ends on line \($0.line)" } ?? ""
        return Unreadable(line: line, detail: """
            the file ends on line \(line) with <\(innermost.name)> (opened on line \(innermost.line)) not closed\(complete): it is truncated
            """)
    }
}
