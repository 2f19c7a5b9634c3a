import DocRouteErrors

/// A configuration problem, naming the file (`inputFile`), the line (`inputLine`, 1-based; none
/// when the problem is not on one line, a missing key) and the key (`inputKey`), and what to write
/// instead.
package typealias ConfigurationError = DocRouteError<ConfigurationErrorCode>

/// Stable codes of ``ConfigurationError``.
package struct ConfigurationErrorCode: ErrorCodeProtocol {
    /// The code's text, e.g. `unknown-key`.
    package let rawValue: String
    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// The file cannot be read.
    package static let unreadable = Self("unreadable")
    /// Not UTF-8, or not TOML.
    package static let syntax = Self("syntax")
    /// A required key is missing.
    package static let missingKey = Self("missing-key")
    /// A key holds a value of another type than it must.
    package static let wrongType = Self("wrong-type")
    /// A key's value cannot be used.
    package static let invalidValue = Self("invalid-value")
    /// A key docrouted does not know (a typo, most likely).
    package static let unknownKey = Self("unknown-key")

    /// `file:line: key: message`, leaving out what is not known.
    package static func describe(_ error: ConfigurationError) -> String {
        var place = error.inputFile ?? ""
        if let line = error.inputLine { place += ":\(line)" }
        if let key = error.inputKey { place += ": \(key)" }
        return "\(place): \(error.message)"
    }
}
