import Foundation

/// A Python script an integration test runs as a client of the daemon (`python3 -c`), often as
/// another user; its standard output and error are read as one. It reports by printing a JSON
/// object on a line of its own.
final class PythonScript {
    static let python = "/usr/bin/python3"

    let process: Process
    let output: Pipe

    /// Starts `script` with `arguments` (its `sys.argv[1...]`).
    init(_ script: String, _ arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = ["-c", script] + arguments
        output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    /// Waits for the script's end: its last line, a JSON object, and everything it wrote. Throws,
    /// saying that `what` did not report, when the last line is no JSON object.
    func finish(_ what: String) throws -> (report: [String: Any], text: String) {
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        let last = text.split(separator: "\n").last.map(String.init) ?? ""
        guard let report = (try? JSONSerialization.jsonObject(with: Data(last.utf8))) as? [String: Any] else {
            throw HarnessError("\(what) did not report (exit \(process.terminationStatus)):\n\(text)")
        }
        return (report, text)
    }

    /// Reads while the script goes on (holding what it took) until a line of `marker` and a JSON
    /// object comes; that object, and what was read. Throws, saying that `what` did not report,
    /// and stops the script, when none came by its end or within `timeout` seconds.
    func firstReport(_ what: String, marker: String = "", timeout: TimeInterval = .infinity) throws -> (report: [String: Any], text: String) {
        var text = ""
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            for line in text.split(separator: "\n") where line.hasPrefix(marker) {
                if let report = (try? JSONSerialization.jsonObject(with: Data(line.dropFirst(marker.count).utf8))) as? [String: Any] {
                    return (report, text)
                }
            }
        }
        process.terminate()
        throw HarnessError("\(what) did not report:\n\(text)")
    }
}
