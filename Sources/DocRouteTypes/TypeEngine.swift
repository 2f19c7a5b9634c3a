/// Types files: name, MIME hint and first bytes give a Uniform Type Identifier and its ancestors.
///
/// The name decides when a declared type claims its extension, unless the content contradicts it
/// (a magic match, priority 50 or more, of a type unrelated to the named one: a PNG called
/// `report.pdf`). A name that says nothing is typed from its first bytes with the shared-mime-info
/// rules, whose MIME type is mapped to a UTI through the catalog's MIME tags; a MIME type no UTI
/// claims becomes a `dyn.` identifier conforming to its nearest claimed parent.
public struct TypeEngine: Sendable {
    public let catalog: TypeCatalog
    public let mimeDatabase: MIMEDatabase
    /// MIME type to UTI, remembered: the mapping walks aliases and parents, and content typing asks
    /// the same few hundred questions again and again.
    let mimeMapping = MIMETypeMapping()

    /// Magic at or above this priority (the spec's default) may overrule an extension whose type it is unrelated to.
    public static let contradictionPriority = 50

    public init(catalog: TypeCatalog, mimeDatabase: MIMEDatabase) {
        self.catalog = catalog
        self.mimeDatabase = mimeDatabase
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

    /// Types a file from its name (nil when there is none), a MIME hint and its first bytes.
    public func classify(filename: String?, head: UnsafeRawBufferPointer, mimeHint: String? = nil) -> TypeClassification {
        let match = filename.map { catalog.match(filename: $0) } ?? FilenameMatch()
        let detection = mimeDatabase.detect(filename: filename, head: head)
        let mapped = type(forMIMEType: detection.mimeType)
        let detectedType: String? = DynamicTypeIdentifier.isDynamic(mapped) ? nil : mapped

        if let named = match.contentType {
            if let sniffed = detection.magic ?? (detection.decidedBy == .glob ? mimeDatabase.magicMatch(head: head) : nil),
               sniffed.priority >= Self.contradictionPriority,
               let sniffedType = declaredType(forMIMEType: sniffed.type) ?? catalog.preferredType(forMIMEType: sniffed.type),
               !catalog.conforms(sniffedType, to: named), !catalog.conforms(named, to: sniffedType) {
                return result(sniffedType, mimeType: sniffed.type, inner: nil, decidedBy: .content, chain: match.extensionChain)
            }
            // A handler's declaration names its own MIME type (chemical/x-pdb); for system types,
            // shared-mime-info is Linux's authority on MIME names, so its answer is kept when it
            // comes from the same name (or the content) and does not point at an unrelated type.
            let handlerDeclared = catalog.declaration(for: named).map { $0.origin != .system } ?? false
            let detectionAgrees = detection.decidedBy == .glob || detection.decidedBy == .magic
            let mimeType: String?
            if let detectedType, related(detectedType, named) {
                mimeType = handlerDeclared ? catalog.preferredMIMEType(for: named) ?? detection.mimeType : detection.mimeType
            } else if detectedType == nil, detectionAgrees, !handlerDeclared {
                mimeType = detection.mimeType
            } else {
                mimeType = catalog.preferredMIMEType(for: named)
            }
            return result(named, mimeType: mimeType, inner: match.innerContentType, decidedBy: .extension, chain: match.extensionChain)
        }

        if let hint = mimeHint.map(TypeCatalog.normalizedMIMEType), !hint.isEmpty, hint != "application/octet-stream" {
            let canonical = mimeDatabase.canonical(hint)
            let type = declaredType(forMIMEType: canonical) ?? dynamicType(forMIMEType: canonical)
            return result(type, mimeType: canonical, inner: nil, decidedBy: .mime, chain: match.extensionChain)
        }

        switch detection.decidedBy {
        case .glob, .magic:
            let type = type(forMIMEType: detection.mimeType)
            return result(type, mimeType: detection.mimeType, inner: nil,
                          decidedBy: detection.decidedBy == .glob ? .extension : .content, chain: match.extensionChain)
        case .textFallback, .binaryFallback:
            if let unknown = match.unknownExtension {
                var classification = dynamic(forExtension: unknown, chain: match.extensionChain)
                classification.mimeType = detection.decidedBy == .textFallback ? "text/plain" : nil
                return classification
            }
            let type = detection.decidedBy == .textFallback ? "public.plain-text" : "public.data"
            return result(type, mimeType: detection.decidedBy == .textFallback ? "text/plain" : "application/octet-stream",
                          inner: nil, decidedBy: .content, chain: "")
        }
    }

    /// Convenience for callers holding an array.
    public func classify(filename: String?, head: [UInt8], mimeHint: String? = nil) -> TypeClassification {
        head.withUnsafeBytes { classify(filename: filename, head: $0, mimeHint: mimeHint) }
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

    /// The declared UTI for a MIME type, trying its canonical name (aliases resolved) too.
    public func declaredType(forMIMEType mimeType: String) -> String? {
        if let type = catalog.preferredType(forMIMEType: mimeType) { return type }
        let canonical = mimeDatabase.canonical(mimeType)
        if canonical != mimeType, let type = catalog.preferredType(forMIMEType: canonical) { return type }
        return nil
    }

    /// The UTI for a detected MIME type: declared, or a `dyn.` one under its nearest claimed parent.
    func type(forMIMEType mimeType: String) -> String {
        if let known = mimeMapping.lookup(mimeType) { return known }
        let type = declaredType(forMIMEType: mimeType) ?? dynamicType(forMIMEType: mimeType)
        mimeMapping.store(mimeType, type)
        return type
    }

    /// A `dyn.` identifier for a MIME type no UTI claims, conforming to its nearest claimed parent.
    func dynamicType(forMIMEType mimeType: String) -> String {
        var parent = "public.data"
        for ancestor in mimeDatabase.ancestors(of: mimeType) {
            if let type = declaredType(forMIMEType: ancestor) { parent = type; break }
        }
        return DynamicTypeIdentifier(tagClass: .mimeType, tag: mimeType, conformingTo: parent).identifier
    }

    func related(_ a: String, _ b: String) -> Bool {
        catalog.conforms(a, to: b) || catalog.conforms(b, to: a)
    }
}
