/// The immutable type catalog: every declared type, its conformance graph and its tag indexes.
///
/// Built once by ``TypeCatalogBuilder`` (system types plus what handlers declare) and then only read,
/// so lookups are plain dictionary and array accesses and the value can be shared across threads.
/// Identifiers and tags compare case-insensitively.
public struct TypeCatalog: Sendable {
    struct Entry: Sendable {
        var declaration: TypeDeclaration
        /// Parent indexes after unknown parents and cycle edges were removed.
        var parents: [Int]
        /// Every ancestor, nearest first (breadth-first over the parents in declaration order).
        var ancestors: [Int]
        var ancestorSet: Set<Int>
        /// The ancestors' identifiers, kept ready so typing a file allocates nothing for them.
        var ancestorIdentifiers: [String]
    }

    var entries: [Entry]
    var indexByIdentifier: [String: Int]
    var indexByExtension: [String: [Int]]
    var indexByMIMEType: [String: [Int]]

    /// What was skipped or repaired while building, with file and key path.
    public let issues: [TypeCatalogIssue]

    /// The ancestors of dynamic identifiers already decoded. Every file typed by a MIME type or an
    /// extension no declaration claims gets a dynamic identifier, typing and handler selection ask
    /// for its ancestors three times per file, and decoding one is the costliest step of both.
    let dynamicAncestors = BoundedMemo<[String]>()

    /// The number of declared types.
    public var count: Int { entries.count }

    /// Every declaration, in catalog order (system first).
    public var declarations: [TypeDeclaration] { entries.map(\.declaration) }

    /// The declaration of `identifier`, or nil when nobody declared it (dynamic identifiers included).
    public func declaration(for identifier: String) -> TypeDeclaration? {
        index(of: identifier).map { entries[$0].declaration }
    }

    /// Whether `identifier` is declared (not dynamic).
    public func contains(_ identifier: String) -> Bool {
        index(of: identifier) != nil
    }

    /// The identifier spelled as declared, or the input when it is not declared.
    public func canonicalIdentifier(_ identifier: String) -> String {
        index(of: identifier).map { entries[$0].declaration.identifier } ?? identifier
    }

    /// All ancestors of `identifier`, nearest first, without the type itself.
    ///
    /// A dynamic identifier conforms to what its encoding says (`public.data` for a bare tag) and
    /// that type's ancestors. An unknown identifier has no ancestors.
    public func ancestors(of identifier: String) -> [String] {
        if let index = index(of: identifier) {
            return entries[index].ancestorIdentifiers
        }
        return dynamicAncestors.value(for: identifier) { decodedAncestors(of: identifier) }
    }

    /// The ancestors an undeclared identifier's encoding gives: none unless it is dynamic.
    private func decodedAncestors(of identifier: String) -> [String] {
        guard let dynamic = DynamicTypeIdentifier(decoding: identifier) else { return [] }
        var result: [String] = []
        for parent in dynamic.conformsTo where !result.contains(parent) {
            result.append(parent)
            for ancestor in ancestors(of: parent) where !result.contains(ancestor) {
                result.append(ancestor)
            }
        }
        return result
    }

    /// Whether `identifier` is `parent` or conforms to it through any path.
    public func conforms(_ identifier: String, to parent: String) -> Bool {
        if identifier.lowercased() == parent.lowercased() { return true }
        if let child = index(of: identifier), let ancestor = index(of: parent) {
            return entries[child].ancestorSet.contains(ancestor)
        }
        return ancestors(of: identifier).contains { $0.lowercased() == parent.lowercased() }
    }

    /// The chain used for handler selection: the type itself, then its ancestors nearest first.
    public func conformanceChain(of identifier: String) -> [String] {
        [canonicalIdentifier(identifier)] + ancestors(of: identifier)
    }

    /// Declared types that claim a filename extension (without the dot), preferred first.
    public func types(forFilenameExtension filenameExtension: String) -> [String] {
        (indexByExtension[filenameExtension.lowercased()] ?? []).map { entries[$0].declaration.identifier }
    }

    /// The preferred declared type for a filename extension, or nil.
    public func preferredType(forFilenameExtension filenameExtension: String) -> String? {
        guard let first = indexByExtension[filenameExtension.lowercased()]?.first else { return nil }
        return entries[first].declaration.identifier
    }

    /// Declared types that claim a MIME type (case-insensitive, parameters ignored), preferred first.
    public func types(forMIMEType mimeType: String) -> [String] {
        (indexByMIMEType[Self.normalizedMIMEType(mimeType)] ?? []).map { entries[$0].declaration.identifier }
    }

    /// The preferred declared type for a MIME type, or nil.
    public func preferredType(forMIMEType mimeType: String) -> String? {
        guard let first = indexByMIMEType[Self.normalizedMIMEType(mimeType)]?.first else { return nil }
        return entries[first].declaration.identifier
    }

    /// The first MIME type the type declares, or, for a dynamic identifier, the MIME tag it encodes.
    public func preferredMIMEType(for identifier: String) -> String? {
        if let index = index(of: identifier) { return entries[index].declaration.mimeTypes.first }
        return DynamicTypeIdentifier(decoding: identifier)?.tags[.mimeType]?.first
    }

    /// The first filename extension the type declares, or the one a dynamic identifier encodes.
    public func preferredFilenameExtension(for identifier: String) -> String? {
        if let index = index(of: identifier) { return entries[index].declaration.filenameExtensions.first }
        return DynamicTypeIdentifier(decoding: identifier)?.tags[.filenameExtension]?.first
    }

    func index(of identifier: String) -> Int? {
        if let index = indexByIdentifier[identifier] { return index }
        return indexByIdentifier[identifier.lowercased()]
    }

    /// Lower case, parameters (`; charset=…`) and surrounding white space removed.
    public static func normalizedMIMEType(_ mimeType: String) -> String {
        var value = Substring(mimeType)
        if let semicolon = value.firstIndex(of: ";") { value = value[..<semicolon] }
        return value.trimmingSpaces().lowercased()
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var value = self
        while let first = value.first, first == " " || first == "\t" { value.removeFirst() }
        while let last = value.last, last == " " || last == "\t" { value.removeLast() }
        return value
    }
}
