/// A configuration problem, naming the file, the line and the key, and what to write instead.
package struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable {
        case unreadable
        case syntax
        case missingKey = "missing-key"
        case wrongType = "wrong-type"
        case invalidValue = "invalid-value"
        case unknownKey = "unknown-key"
    }

    package var code: Code
    package var file: String
    /// 1-based; nil when the problem is not on one line (a missing key).
    package var line: Int?
    package var key: String?
    package var message: String

    package init(code: Code, file: String, line: Int? = nil, key: String? = nil, message: String) {
        self.code = code
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    package var description: String {
        var place = file
        if let line { place += ":\(line)" }
        if let key { place += ": \(key)" }
        return "\(place): \(message)"
    }
}
