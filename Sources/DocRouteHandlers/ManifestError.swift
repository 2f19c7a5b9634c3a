/// Why a manifest was not loaded. One error per manifest: the first problem found, with the file
/// and the key path (`CFBundleIdentifier`), and what to do.
///
/// Only what leaves nothing to use fails a manifest, as with Launch Services: not a property list,
/// no usable `CFBundleIdentifier`, an identifier another manifest has too, and docroute's own keys
/// that say who gets the documents and where (`DocRouteUser`, `DocRouteContainer`,
/// `DocRouteLaunchCommand`), which are never guessed. Anything else is a ``ManifestWarning``.
public struct ManifestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable codes for tests and tools.
    public enum Code: String, Sendable, Hashable, Codable {
        case unreadable
        case notPropertyList = "not-property-list"
        case wrongType = "wrong-type"
        case missingKey = "missing-key"
        case invalidValue = "invalid-value"
        case duplicateIdentifier = "duplicate-identifier"
        /// `CFBundleIdentifier` is an Xcode build variable (`$(PRODUCT_BUNDLE_IDENTIFIER)`) never expanded.
        case buildVariable = "build-variable"
    }

    public var code: Code
    public var file: String
    /// Where in the property list; empty for the file as a whole.
    public var keyPath: String
    public var message: String

    public init(code: Code, file: String, keyPath: String = "", message: String) {
        self.code = code
        self.file = file
        self.keyPath = keyPath
        self.message = message
    }

    public var description: String {
        keyPath.isEmpty ? "\(file): \(message)" : "\(file): \(keyPath): \(message)"
    }
}
