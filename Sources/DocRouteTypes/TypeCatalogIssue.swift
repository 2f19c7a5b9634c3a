import DocRouteErrors

/// A problem found while building the catalog. The offending declaration (or edge) is skipped and
/// the rest loads; the issue says where it came from so an author can fix it: the file
/// (`inputFile`) and the key path inside it (`inputKey`, e.g.
/// `UTExportedTypeDeclarations[0].UTTypeConformsTo[1]`), when known.
public typealias TypeCatalogIssue = DocRouteError<TypeCatalogIssueCode>

/// Stable codes of ``TypeCatalogIssue``, for tests and for tools that filter.
public struct TypeCatalogIssueCode: ErrorCodeProtocol {
    /// The code's text, e.g. `unknown-parent`.
    public let rawValue: String
    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// A declaration without `UTTypeIdentifier`.
    public static let missingIdentifier = Self("missing-identifier")
    /// A value of the declaration cannot be used.
    public static let invalidValue = Self("invalid-value")
    /// `UTTypeConformsTo` names a type nobody declares.
    public static let unknownParent = Self("unknown-parent")
    /// The conformance edges form a cycle.
    public static let conformanceCycle = Self("conformance-cycle")
    /// A handler exports a system type.
    public static let systemTypeRedefined = Self("system-type-redefined")
    /// Two handlers export the same type; one declaration wins.
    public static let overridden = Self("overridden")

    /// `file: key path: message`, leaving out what is not known.
    public static func describe(_ issue: TypeCatalogIssue) -> String {
        var place = issue.inputFile ?? ""
        if let keyPath = issue.inputKey { place += place.isEmpty ? keyPath : ": \(keyPath)" }
        return place.isEmpty ? issue.message : "\(place): \(issue.message)"
    }
}
