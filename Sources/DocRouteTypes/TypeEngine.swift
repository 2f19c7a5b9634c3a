/// Types files: name, MIME hint and first bytes give a MIME type and a Uniform Type Identifier
/// with its ancestors.
///
/// The MIME type is what freedesktop detection finds (``MIMEDatabase/detect(filename:head:options:)``,
/// GLib's algorithm), with the types that handlers export taking part as globs. The UTI comes from it:
/// a declared type with that MIME type (or one of its aliases); else the type the name gives when the
/// detected type is a subclass of one of its MIME types; else a `dyn.` identifier of the MIME type under
/// its nearest declared parent. When the MIME database does not know the name but the catalog does
/// (an extension only a UTI declaration claims), the name decides unless magic of priority 50 or more
/// names an unrelated type.
public struct TypeEngine: Sendable {
    public let catalog: TypeCatalog
    /// The database detection uses: the one given, with the handlers' declared types added as globs.
    public let mimeDatabase: MIMEDatabase
    /// MIME type to UTI, remembered: the mapping walks aliases and parents, and content typing asks
    /// the same few hundred questions again and again.
    let mimeMapping = BoundedMemo<String>()

    /// Magic at or above this priority (the spec's default) may overrule an extension that only the
    /// type catalog knows, when the two types are unrelated.
    public static let contradictionPriority = 50

    /// - Parameters:
    ///   - catalog: The type catalog; its exported and imported declarations with both filename
    ///     extensions and MIME types become `*.ext` globs (weight 50) of a layer above `mimeDatabase`.
    ///   - mimeDatabase: The shared-mime-info database (or ``MIMEDatabase/builtin``).
    public init(catalog: TypeCatalog, mimeDatabase: MIMEDatabase) {
        self.catalog = catalog
        self.mimeDatabase = Self.addingDeclaredTypes(of: catalog, to: mimeDatabase)
    }

    /// Types a file by its name alone: the fast path, no I/O and no content.
    public func classify(filename: String) -> TypeClassification {
        let match = catalog.match(filename: filename)
        if let contentType = match.contentType {
            return TypeClassification(
                contentType: contentType, conformsTo: catalog.ancestors(of: contentType),
                mimeType: catalog.preferredMIMEType(for: contentType), innerContentType: match.innerContentType,
                decidedBy: .extension, extensionChain: match.extensionChain)
        }
        if let unknown = match.unknownExtension {
            return dynamic(forExtension: unknown, chain: match.extensionChain)
        }
        return TypeClassification(contentType: "public.data", conformsTo: catalog.ancestors(of: "public.data"),
                                  mimeType: nil, innerContentType: nil, decidedBy: .dynamic, extensionChain: "")
    }

    /// Types a folder by its name: a package type (`Report.rtfd`) when the name gives one, else
    /// `public.folder`. Either way it conforms to `public.directory` and `public.item`.
    public func classify(directoryNamed name: String) -> TypeClassification {
        let match = catalog.match(filename: name)
        if let contentType = match.contentType, catalog.conforms(contentType, to: "public.directory") {
            return result(contentType, mimeType: nil, inner: nil, decidedBy: .extension, chain: match.extensionChain)
        }
        return result("public.folder", mimeType: "inode/directory", inner: nil, decidedBy: .content, chain: "")
    }

    /// Types a file from its name (nil when there is none), a MIME hint and its first bytes.
    ///
    /// The hint (a mail part's `Content-Type`) is used when neither the MIME database nor the
    /// catalog knows the name; `application/octet-stream` says nothing and is ignored.
    public func classify(filename: String?, head: UnsafeRawBufferPointer, mimeHint: String? = nil) -> TypeClassification {
        let match = filename.map { catalog.match(filename: $0) } ?? FilenameMatch()
        let detection = mimeDatabase.detect(filename: filename, head: head)
        let decision: TypeClassification.Decision = detection.decidedBy == .glob ? .extension : .content

        // The MIME database knows the name: detection is the authority.
        if !detection.globCandidates.isEmpty {
            let type = contentType(forMIMEType: detection.mimeType, named: match.contentType)
            return result(type, mimeType: detection.mimeType, inner: inner(of: match, for: type),
                          decidedBy: decision, chain: match.extensionChain)
        }

        // Only the catalog knows the name (an extension a UTI declares without a MIME type, or one
        // shared-mime-info lacks): it decides, unless sure content names an unrelated type.
        if let named = match.contentType {
            if let sniffed = detection.magic, sniffed.priority >= Self.contradictionPriority,
               let sniffedType = declaredType(forMIMEType: sniffed.type), !related(sniffedType, named) {
                return result(sniffedType, mimeType: sniffed.type, inner: nil, decidedBy: .content, chain: match.extensionChain)
            }
            return result(named, mimeType: detection.mimeType, inner: match.innerContentType,
                          decidedBy: .extension, chain: match.extensionChain)
        }

        if let hint = mimeHint.map(TypeCatalog.normalizedMIMEType), !hint.isEmpty, hint != MIMEDatabase.octetStream {
            let canonical = mimeDatabase.canonical(hint)
            return result(type(forMIMEType: canonical), mimeType: canonical, inner: nil, decidedBy: .mime,
                          chain: match.extensionChain)
        }

        switch detection.decidedBy {
        case .glob, .magic:
            return result(type(forMIMEType: detection.mimeType), mimeType: detection.mimeType, inner: nil,
                          decidedBy: .content, chain: match.extensionChain)
        case .textFallback, .binaryFallback:
            if let unknown = match.unknownExtension {
                // As macOS does for an extension nobody declares: a dyn. type of the extension.
                var classification = dynamic(forExtension: unknown, chain: match.extensionChain)
                classification.mimeType = detection.mimeType
                return classification
            }
            let type = detection.decidedBy == .textFallback ? "public.plain-text" : "public.data"
            return result(type, mimeType: detection.mimeType, inner: nil, decidedBy: .content, chain: "")
        }
    }

    /// Convenience for callers holding an array.
    public func classify(filename: String?, head: [UInt8], mimeHint: String? = nil) -> TypeClassification {
        head.withUnsafeBytes { classify(filename: filename, head: $0, mimeHint: mimeHint) }
    }

    /// The UTI for a detected MIME type: a declared type with that MIME type (or an alias of it);
    /// else the name's type when the MIME type is a subclass of one of its MIME types; else a
    /// `dyn.` identifier under the nearest declared parent.
    ///
    /// A name's type without MIME types of its own counts when it conforms to the declared type of
    /// the detected type's nearest parent (`backup.tgz`: `application/x-compressed-tar` is nobody's,
    /// its parent `application/gzip` is `org.gnu.gnu-zip-archive`, which the name's
    /// `org.gnu.gnu-zip-tar-archive` conforms to); `public.data` is too general to count.
    func contentType(forMIMEType mimeType: String, named: String?) -> String {
        // Remembered per MIME type: this runs for every arriving file.
        let mapped = type(forMIMEType: mimeType)
        guard mapped.utf8.starts(with: "dyn.".utf8) else { return mapped }
        let dynamic = mapped
        guard let named, let index = catalog.index(of: named) else { return dynamic }
        let declaration = catalog.entries[index].declaration
        if declaration.mimeTypes.contains(where: { mimeDatabase.isSubclass(mimeType, of: $0) }) {
            return declaration.identifier
        }
        if declaration.mimeTypes.isEmpty, let parent = nearestDeclaredParent(ofMIMEType: mimeType),
           parent != "public.data", catalog.conforms(named, to: parent) {
            return declaration.identifier
        }
        return dynamic
    }

    /// The compound name's inner type, kept while the outer type is the one the name gives (or
    /// related to it): `1abc.pdb.gz` stays a gzip archive holding a `.pdb`.
    func inner(of match: FilenameMatch, for type: String) -> String? {
        guard let inner = match.innerContentType, let named = match.contentType, related(type, named) else { return nil }
        return inner
    }

    func result(_ type: String, mimeType: String?, inner: String?, decidedBy: TypeClassification.Decision, chain: String) -> TypeClassification {
        TypeClassification(contentType: type, conformsTo: catalog.ancestors(of: type), mimeType: mimeType,
                           innerContentType: inner, decidedBy: decidedBy, extensionChain: chain)
    }

    func dynamic(forExtension tag: String, chain: String) -> TypeClassification {
        let identifier = DynamicTypeIdentifier(tagClass: .filenameExtension, tag: tag).identifier
        // A bare extension's dynamic type conforms to public.data: no need to decode what was just encoded.
        return TypeClassification(contentType: identifier, conformsTo: dataAncestors, mimeType: nil,
                                  innerContentType: nil, decidedBy: .dynamic, extensionChain: chain)
    }

    var dataAncestors: [String] { ["public.data"] + catalog.ancestors(of: "public.data") }

    /// The declared UTI for a MIME type, trying its canonical name and that name's aliases too
    /// (a declaration may carry `text/xml` where the database says `application/xml`).
    public func declaredType(forMIMEType mimeType: String) -> String? {
        if let type = catalog.preferredType(forMIMEType: mimeType) { return type }
        let canonical = mimeDatabase.canonical(mimeType)
        if canonical != mimeType, let type = catalog.preferredType(forMIMEType: canonical) { return type }
        for alias in mimeDatabase.aliasesByTarget[canonical] ?? [] {
            if let type = catalog.preferredType(forMIMEType: alias) { return type }
        }
        return nil
    }

    /// The UTI for a detected MIME type: declared, or a `dyn.` one under its nearest claimed parent.
    func type(forMIMEType mimeType: String) -> String {
        mimeMapping.value(for: mimeType) {
            declaredType(forMIMEType: mimeType) ?? dynamicType(forMIMEType: mimeType)
        }
    }

    /// A `dyn.` identifier for a MIME type no UTI claims, conforming to its nearest claimed parent.
    func dynamicType(forMIMEType mimeType: String) -> String {
        let parent = nearestDeclaredParent(ofMIMEType: mimeType) ?? "public.data"
        return DynamicTypeIdentifier(tagClass: .mimeType, tag: mimeType, conformingTo: parent).identifier
    }

    /// The declared type of the nearest MIME ancestor that has one.
    func nearestDeclaredParent(ofMIMEType mimeType: String) -> String? {
        for ancestor in mimeDatabase.ancestors(of: mimeType) {
            if let type = declaredType(forMIMEType: ancestor) { return type }
        }
        return nil
    }

    func related(_ a: String, _ b: String) -> Bool {
        catalog.conforms(a, to: b) || catalog.conforms(b, to: a)
    }
}
