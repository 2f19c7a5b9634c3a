/// Why a manifest was not loaded. One error per manifest: the first problem found, with the file
/// and the key path (`CFBundleDocumentTypes[0].LSHandlerRank`), and what to do.
public struct ManifestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable codes for tests and tools.
    public enum Code: String, Sendable, Hashable, Codable {
        case unreadable
        case notPropertyList = "not-property-list"
        case wrongType = "wrong-type"
        case missingKey = "missing-key"
        case invalidValue = "invalid-value"
        case duplicateIdentifier = "duplicate-identifier"
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
