import DocRouteErrors

/// A configuration problem, naming the file (`inputFile`), the line (`inputLine`, 1-based; none
/// when the problem is not on one line, a missing key) and the key (`inputKey`), and what to write
/// instead.
package typealias ConfigurationError = DocRouteError<ConfigurationErrorCode>

/// Stable codes of ``ConfigurationError``: those of every file a person writes
/// (``InputErrorCode``: `unreadable`, `wrong-type`, `missing-key`, `invalid-value`) and two of
/// TOML's.
package struct ConfigurationErrorCode: InputErrorCode {
    /// The code's text, e.g. `unknown-key`.
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }

    /// Not UTF-8, or not TOML.
    package static let syntax = Self(rawValue: "syntax")
    /// A key docrouted does not know (a typo, most likely).
    package static let unknownKey = Self(rawValue: "unknown-key")

    /// `file:line: key: message`, leaving out what is not known.
    package static func describe(_ error: ConfigurationError) -> String {
        var place = error.inputFile ?? ""
        if let line = error.inputLine { place += ":\(line)" }
        if let key = error.inputKey { place += ": \(key)" }
        return "\(place): \(error.message)"
    }
}
