import DocRouteTestSupport
import Foundation

/// The bytes of a line as a test writes it.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A line's bytes as text, for readable expectations.
func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// The repository's copy of the protocol contract.
func protocolDocument() throws -> String {
    try String(contentsOfFile: Fixtures.repositoryRoot + "/docs/PROTOCOL.md", encoding: .utf8)
}

/// The ```json block of PROTOCOL.md that starts with `prefix`, joined onto one line the way
/// the wire carries it (the document breaks lines only between fields).
func jsonExample(startingWith prefix: String) throws -> String? {
    let document = try protocolDocument()
    for block in document.components(separatedBy: "```json\n").dropFirst() {
        guard let end = block.range(of: "```") else { continue }
        let example = block[..<end.lowerBound]
            .split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .joined()
        if example.hasPrefix(prefix) { return example }
    }
    return nil
}

/// Every inline code span of PROTOCOL.md that holds a one-line message.
func inlineMessageExamples() throws -> [String] {
    let document = try protocolDocument()
    return document.components(separatedBy: "`").enumerated()
        .filter { $0.offset % 2 == 1 && $0.element.hasPrefix("{\"type\":") }
        .map(\.element)
}
