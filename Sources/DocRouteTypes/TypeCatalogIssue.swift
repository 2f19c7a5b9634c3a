import DocRouteErrors

/// A problem found while building the catalog. The offending declaration (or edge) is skipped and
/// the rest loads; the issue says where it came from so an author can fix it: the file
/// (`inputFile`) and the key path inside it (`inputKey`, e.g.
/// `UTExportedTypeDeclarations[0].UTTypeConformsTo[1]`), when known.
public typealias TypeCatalogIssue = DocRouteError<TypeCatalogIssueCode>

/// Stable codes of ``TypeCatalogIssue``, for tests and for tools that filter: those of every file
/// a person writes (``InputErrorCode``; a declaration's value that cannot be used is
/// `invalid-value`) and the catalog's own.
public struct TypeCatalogIssueCode: InputErrorCode {
    /// The code's text, e.g. `unknown-parent`.
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A declaration without `UTTypeIdentifier`.
    public static let missingIdentifier = Self(rawValue: "missing-identifier")
    /// `UTTypeConformsTo` names a type nobody declares.
    public static let unknownParent = Self(rawValue: "unknown-parent")
    /// The conformance edges form a cycle.
    public static let conformanceCycle = Self(rawValue: "conformance-cycle")
    /// A handler exports a system type.
    public static let systemTypeRedefined = Self(rawValue: "system-type-redefined")
    /// Two handlers export the same type; one declaration wins.
    public static let overridden = Self(rawValue: "overridden")

    /// `file: key path: message`, leaving out what is not known.
    public static func describe(_ issue: TypeCatalogIssue) -> String {
        var place = issue.inputFile ?? ""
        if let keyPath = issue.inputKey { place += place.isEmpty ? keyPath : ": \(keyPath)" }
        return place.isEmpty ? issue.message : "\(place): \(issue.message)"
    }
}
