import DocRouteErrors

/// A configuration problem, naming the file (`inputFile`), the line (`inputLine`, 1-based; none
/// when the problem is not on one line, a missing key) and the key (`inputKey`), and what to write
/// instead.
package typealias ConfigurationError = DocRouteError<ConfigurationErrorCode>

/// Stable codes of ``ConfigurationError``.
package struct ConfigurationErrorCode: ErrorCodeProtocol {
    private enum Known: String {
        case unreadable
        case syntax
        case missingKey = "missing-key"
        case wrongType = "wrong-type"
        case invalidValue = "invalid-value"
        case unknownKey = "unknown-key"
    }

    private let known: Known
    private init(_ known: Known) { self.known = known }
    /// The code's text, e.g. `unknown-key`.
    package var rawValue: String { known.rawValue }

    /// The file cannot be read.
    package static let unreadable = Self(.unreadable)
    /// Not UTF-8, or not TOML.
    package static let syntax = Self(.syntax)
    /// A required key is missing.
    package static let missingKey = Self(.missingKey)
    /// A key holds a value of another type than it must.
    package static let wrongType = Self(.wrongType)
    /// A key's value cannot be used.
    package static let invalidValue = Self(.invalidValue)
    /// A key docrouted does not know (a typo, most likely).
    package static let unknownKey = Self(.unknownKey)

    /// `file:line: key: message`, leaving out what is not known.
    package static func describe(_ error: ConfigurationError) -> String {
        var place = error.inputFile ?? ""
        if let line = error.inputLine { place += ":\(line)" }
        if let key = error.inputKey { place += ": \(key)" }
        return "\(place): \(error.message)"
    }
}
