/// Who declared a type. Order matters: for one identifier the system's declaration wins over a
/// handler's exported one, which wins over an imported one.
public enum DeclarationOrigin: Sendable, Hashable, Comparable {
    /// Apple's CoreTypes (system-utis.json) and the project's built-in additions.
    case system
    /// `UTExportedTypeDeclarations` of the handler with this bundle identifier: it owns the type.
    case exported(bundleIdentifier: String)
    /// `UTImportedTypeDeclarations`: the handler describes a type someone else owns.
    case imported(bundleIdentifier: String)

    /// Lower wins.
    var precedence: Int {
        switch self {
        case .system: 0
        case .exported: 1
        case .imported: 2
        }
    }

    public static func < (lhs: DeclarationOrigin, rhs: DeclarationOrigin) -> Bool {
        lhs.precedence < rhs.precedence
    }

    /// `system`, `exported`, `imported`: for output.
    public var kind: String {
        switch self {
        case .system: "system"
        case .exported: "exported"
        case .imported: "imported"
        }
    }

    /// The declaring handler, if any.
    public var bundleIdentifier: String? {
        switch self {
        case .system: nil
        case .exported(let id), .imported(let id): id
        }
    }
}
