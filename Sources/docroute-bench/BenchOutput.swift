import Foundation

/// Where figures go: a table for people on standard output, or, with `--json`, the table on
/// standard error and one JSON document on standard output at the end (for regenerating the README).
final class BenchOutput: @unchecked Sendable {
    static let shared = BenchOutput()

    /// One line of a benchmark's table.
    struct Figure: Codable, Sendable {
        var name: String
        var value: Double
        var unit: String
        var target: String?
    }

    /// What `--json` writes.
    struct Document: Codable, Sendable {
        var figures: [Figure]
        var compare: Comparison?
    }

    private let lock = NSLock()
    private var figures: [Figure] = []
    private var comparison: Comparison?
    private var json = false

    /// From now on, people's lines go to standard error and ``finish()`` writes the JSON document.
    func enableJSON() {
        lock.withLock { json = true }
    }

    func human(_ line: String) {
        let toError = lock.withLock { json }
        let data = Data((line + "\n").utf8)
        if toError { FileHandle.standardError.write(data) } else { FileHandle.standardOutput.write(data) }
    }

    func record(_ figure: Figure) {
        lock.withLock { figures.append(figure) }
    }

    func record(_ comparison: Comparison) {
        lock.withLock { self.comparison = comparison }
    }

    /// Writes the JSON document when `--json` asked for it.
    func finish() throws {
        lock.lock()
        let wanted = json
        let document = Document(figures: figures, compare: comparison)
        lock.unlock()
        guard wanted else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(document)
        data.append(0x0A)
        FileHandle.standardOutput.write(data)
    }
}
