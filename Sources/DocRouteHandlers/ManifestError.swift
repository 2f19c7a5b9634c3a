import DocRouteErrors

/// Why a manifest was not loaded. One error per manifest: the first problem found, with the file
/// (`inputFile`) and the key path (`inputKey`, e.g. `CFBundleIdentifier`), and what to do.
///
/// Only what leaves nothing to use fails a manifest, as with Launch Services: not a property list,
/// no usable `CFBundleIdentifier`, an identifier another manifest has too (the one loaded before
/// keeps serving; see ``HandlerRegistry``), and docroute's own keys
/// that say who gets the documents and where (`DocRouteUser`, `DocRouteContainer`,
/// `DocRouteLaunchCommand`), which are never guessed, and a `DocRouteUser` this host has no
/// user of. Anything else is a ``ManifestWarning``.
public typealias ManifestError = DocRouteError<ManifestErrorCode>

/// Stable codes of ``ManifestError``, for tests and tools: those of every file a person writes
/// (``InputErrorCode``: `unreadable`, `wrong-type`, `missing-key`, `invalid-value`) and a
/// manifest's own.
public struct ManifestErrorCode: InputErrorCode {
    /// The code's text, e.g. `missing-key`.
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The file is not a property list (XML or binary).
    public static let notPropertyList = Self(rawValue: "not-property-list")
    /// Another manifest has the same `CFBundleIdentifier`.
    public static let duplicateIdentifier = Self(rawValue: "duplicate-identifier")
    /// `CFBundleIdentifier` is an Xcode build variable (`$(PRODUCT_BUNDLE_IDENTIFIER)`) never expanded.
    public static let buildVariable = Self(rawValue: "build-variable")
    /// `DocRouteUser` names a user this host does not have.
    public static let unknownUser = Self(rawValue: "unknown-user")

    /// `file: key path: message` (`file:line:` when the line is known), without the key path for
    /// the file as a whole.
    public static func describe(_ error: ManifestError) -> String {
        let place = (error.inputFile ?? "") + (error.inputLine.map { ":\($0)" } ?? "")
        return [place, error.inputKey, error.message].compactMap { $0 }.joined(separator: ": ")
    }
}
