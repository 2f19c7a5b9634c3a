/// A configuration problem, naming the file, the line and the key, and what to write instead.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case unreadable
        case syntax
        case missingKey = "missing-key"
        case wrongType = "wrong-type"
        case invalidValue = "invalid-value"
        case unknownKey = "unknown-key"
    }

    public var code: Code
    public var file: String
    /// 1-based; nil when the problem is not on one line (a missing key).
    public var line: Int?
    public var key: String?
    public var message: String

    public init(code: Code, file: String, line: Int? = nil, key: String? = nil, message: String) {
        self.code = code
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    public var description: String {
        var place = file
        if let line { place += ":\(line)" }
        if let key { place += ": \(key)" }
        return "\(place): \(message)"
    }
}
