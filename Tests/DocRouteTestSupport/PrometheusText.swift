import Foundation

/// A strict reader of the Prometheus text exposition format (0.0.4), for the metrics tests: every
/// sample must follow the `# TYPE` line of its family (a histogram's `_bucket`, `_sum` and
/// `_count` belong to it), names and labels must be well formed, values numbers, series unique.
public enum PrometheusText {
    /// Samples by series as written (`name{label="value",…}`), values as numbers.
    public static func parse(_ text: String) throws -> [String: Double] {
        var families: [String: String] = [:]
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3]) else {
                    throw TestSupportError("bad TYPE line: \(line)")
                }
                guard families.updateValue(String(parts[3]), forKey: String(parts[2])) == nil else {
                    throw TestSupportError("family declared twice: \(line)")
                }
                continue
            }
            if line.hasPrefix("#") { continue }
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                throw TestSupportError("no value: \(line)")
            }
            let series = String(line[..<space])
            guard series.range(of: #"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})?$"#, options: .regularExpression) != nil else {
                throw TestSupportError("bad series: \(line)")
            }
            let name = String(series.prefix { $0 != "{" })
            let declared = families[name] != nil || ["_bucket", "_sum", "_count"].contains {
                name.hasSuffix($0) && families[String(name.dropLast($0.count))] == "histogram"
            }
            guard declared else { throw TestSupportError("sample before its TYPE line: \(line)") }
            guard samples.updateValue(value, forKey: series) == nil else { throw TestSupportError("duplicate series: \(line)") }
        }
        return samples
    }
}
