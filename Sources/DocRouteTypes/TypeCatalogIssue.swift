/// A problem found while building the catalog. The offending declaration (or edge) is skipped and
/// the rest loads; the issue says where it came from so an author can fix it.
public struct TypeCatalogIssue: Sendable, Hashable, CustomStringConvertible {
    /// Stable codes, for tests and for tools that filter.
    public enum Code: String, Sendable, Hashable {
        case missingIdentifier = "missing-identifier"
        case invalidValue = "invalid-value"
        case unknownParent = "unknown-parent"
        case conformanceCycle = "conformance-cycle"
        case systemTypeRedefined = "system-type-redefined"
        case overridden = "overridden"
    }

    public var code: Code
    /// The file the declaration came from, when known.
    public var file: String?
    /// The key path inside it, e.g. `UTExportedTypeDeclarations[0].UTTypeConformsTo[1]`.
    public var keyPath: String?
    /// What is wrong and what to do about it.
    public var message: String

    public init(code: Code, file: String? = nil, keyPath: String? = nil, message: String) {
        self.code = code
        self.file = file
        self.keyPath = keyPath
        self.message = message
    }

    public var description: String {
        var place = file ?? ""
        if let keyPath { place += place.isEmpty ? keyPath : ": \(keyPath)" }
        return place.isEmpty ? message : "\(place): \(message)"
    }
}
