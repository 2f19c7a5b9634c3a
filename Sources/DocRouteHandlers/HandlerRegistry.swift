import DocRouteTypes

/// An immutable snapshot of the registered handlers and the type catalog their declarations extend.
///
/// A reload builds a new registry; work already started keeps the snapshot it began with.
public struct HandlerRegistry: Sendable {
    struct ClaimReference: Sendable {
        var handler: Int
        var rank: HandlerRank
        var role: HandlerRole
    }

    /// System types plus every loaded handler's exported and imported declarations.
    public let catalog: TypeCatalog
    /// Loaded handlers, ordered by bundle identifier.
    public let handlers: [RegisteredHandler]
    /// Manifests that did not load, with why.
    public let failures: [ManifestFailure]
    /// What the loaded manifests said that was read otherwise than written, and the problems of
    /// their type declarations, by file and then in file order.
    public let warnings: [ManifestWarning]

    var indexByBundleIdentifier: [String: Int]
    /// Lower-cased type identifier to the handlers claiming it, rank `None` and role `None` left out.
    var claimsByType: [String: [ClaimReference]]
    var handlersByScheme: [String: [Int]]
    var packageTypes: Set<String>
    /// The same claims by catalog handle, so choosing a handler hashes no strings.
    var claimsByTypeIndex: [[ClaimReference]]

    /// Builds a registry.
    ///
    /// Manifests sharing a bundle identifier: the one `previouslyLoaded` names (the file each
    /// lower-cased bundle identifier was loaded from before, ``loadedFiles`` of the registry this
    /// one replaces) keeps serving and the others are refused, so copying a live handler's manifest
    /// never takes it away with its pending documents; when none of them was loaded before, all are
    /// refused, since which one was meant cannot be told.
    public init(manifests: [HandlerManifest], failures: [ManifestFailure] = [], typeIssues: [TypeCatalogIssue] = [],
                previouslyLoaded: [String: String] = [:]) {
        var failures = failures
        var byIdentifier: [String: [HandlerManifest]] = [:]
        for manifest in manifests { byIdentifier[manifest.bundleIdentifier.lowercased(), default: []].append(manifest) }
        var accepted: [HandlerManifest] = []
        var registryWarnings: [ManifestWarning] = []
        for (key, group) in byIdentifier {
            if group.count == 1 { accepted.append(group[0]); continue }
            let outcome = Self.resolveDuplicates(group, previousFile: previouslyLoaded[key])
            if let kept = outcome.kept { accepted.append(kept) }
            failures += outcome.refused
            registryWarnings += outcome.warnings
        }
        accepted.sort { $0.bundleIdentifier < $1.bundleIdentifier }

        var builder = TypeCatalogBuilder.withSystemTypes()
        for issue in typeIssues { builder.report(issue) }
        // Exported first, so an import seen earlier never shadows the owner's declaration.
        for manifest in accepted {
            for (index, declaration) in manifest.exportedTypes.enumerated() {
                builder.add(declaration, file: manifest.file, keyPath: manifest.keyPath(ofDeclaration: index, exported: true))
            }
        }
        for manifest in accepted {
            for (index, declaration) in manifest.importedTypes.enumerated() {
                builder.add(declaration, file: manifest.file, keyPath: manifest.keyPath(ofDeclaration: index, exported: false))
            }
        }
        let catalog = builder.build()

        var handlers: [RegisteredHandler] = []
        var indexByBundleIdentifier: [String: Int] = [:]
        var claimsByType: [String: [ClaimReference]] = [:]
        var handlersByScheme: [String: [Int]] = [:]
        var packageTypes: Set<String> = []
        for manifest in accepted {
            let index = handlers.count
            var claims: [RegisteredHandler.Claim] = []
            for documentType in manifest.documentTypes {
                for contentType in Self.resolvedTypes(of: documentType, in: catalog) {
                    claims.append(.init(contentType: contentType, rank: documentType.rank, role: documentType.role, isPackage: documentType.isPackage))
                    let key = contentType.lowercased()
                    if documentType.isPackage { packageTypes.insert(key) }
                    guard documentType.rank != .none, documentType.role != .none,
                          claimsByType[key]?.contains(where: { $0.handler == index }) != true
                    else { continue }
                    claimsByType[key, default: []].append(ClaimReference(
                        handler: index, rank: documentType.rank, role: documentType.role))
                }
            }
            for scheme in manifest.schemes where handlersByScheme[scheme]?.contains(index) != true {
                handlersByScheme[scheme, default: []].append(index)
            }
            indexByBundleIdentifier[manifest.bundleIdentifier.lowercased()] = index
            handlers.append(RegisteredHandler(manifest: manifest, claims: claims))
        }
        // A handler that opens nothing loads without a word otherwise: a misspelled key or a
        // generator-only manifest looks installed and never receives a document.
        for handler in handlers where handler.manifest.schemes.isEmpty
            && !handler.claims.contains(where: { $0.rank != .none && $0.role != .none }) {
            registryWarnings.append(ManifestWarning(
                code: .claimsNothing, file: handler.manifest.file, keyPath: "",
                message: "\(handler.bundleIdentifier) claims no document type and no URL scheme that it opens, so it is never sent anything; "
                    + "list the types it opens in CFBundleDocumentTypes (LSItemContentTypes, with a role other than None) or its schemes in CFBundleURLTypes"))
        }
        self.catalog = catalog
        self.handlers = handlers
        self.failures = failures.sorted { $0.file < $1.file }
        self.warnings = Self.warnings(of: accepted, catalog: catalog, extra: registryWarnings)
        self.indexByBundleIdentifier = indexByBundleIdentifier
        self.claimsByType = claimsByType
        self.handlersByScheme = handlersByScheme
        self.packageTypes = packageTypes
        var claimsByTypeIndex = Array(repeating: [ClaimReference](), count: catalog.count)
        for (type, references) in claimsByType {
            if let index = catalog.typeIndex(of: type) { claimsByTypeIndex[index] = references }
        }
        self.claimsByTypeIndex = claimsByTypeIndex
    }

    /// The file each loaded handler was read from, by lower-cased bundle identifier: what the next
    /// registry is given as `previouslyLoaded`.
    public var loadedFiles: [String: String] {
        Dictionary(handlers.map { ($0.bundleIdentifier.lowercased(), $0.manifest.file) }, uniquingKeysWith: { first, _ in first })
    }

    /// Of manifests sharing a bundle identifier, the one loaded before (if it is among them) and
    /// the refusals of the others, each naming the files involved and what to do.
    static func resolveDuplicates(_ group: [HandlerManifest], previousFile: String?)
        -> (kept: HandlerManifest?, refused: [ManifestFailure], warnings: [ManifestWarning]) {
        let identifier = group[0].bundleIdentifier
        let files = group.map(\.file).sorted()
        guard let previousFile, let kept = group.first(where: { $0.file == previousFile }) else {
            let refused = group.map { manifest in
                ManifestFailure(
                    file: manifest.file, bundleIdentifier: manifest.bundleIdentifier,
                    error: ManifestError(
                        code: .duplicateIdentifier, inputFile: manifest.file, inputKey: "CFBundleIdentifier",
                        message: "'\(identifier)' is declared by \(files.joined(separator: " and ")), and neither was loaded before, "
                            + "so neither is loaded; remove one of them, or give it a CFBundleIdentifier of its own"))
            }
            return (nil, refused, [])
        }
        let others = group.filter { $0.file != kept.file }
        let refused = others.map { manifest in
            ManifestFailure(
                file: manifest.file, bundleIdentifier: manifest.bundleIdentifier,
                error: ManifestError(
                    code: .duplicateIdentifier, inputFile: manifest.file, inputKey: "CFBundleIdentifier",
                    message: "'\(identifier)' is declared by \(kept.file) too, which was loaded before and keeps serving; "
                        + "this file is refused: remove it, or give it a CFBundleIdentifier of its own"))
        }
        let warning = ManifestWarning(
            code: .duplicateIdentifier, file: kept.file, keyPath: "CFBundleIdentifier",
            message: "\(others.map(\.file).sorted().joined(separator: " and ")) declare\(others.count == 1 ? "s" : "") '\(identifier)' too "
                + "and \(others.count == 1 ? "is" : "are") refused; this file, loaded before, keeps serving")
        return (kept, refused, [warning])
    }

    /// The handler with this bundle identifier (case-insensitive), if loaded.
    public func handler(for bundleIdentifier: String) -> RegisteredHandler? {
        indexByBundleIdentifier[bundleIdentifier.lowercased()].map { handlers[$0] }
    }

    /// Problems in type declarations (skipped declarations, broken cycles), with file and key path.
    public var typeIssues: [TypeCatalogIssue] { catalog.issues }

    /// The manifests' own warnings and the catalog's issues as warnings, grouped by file (in name
    /// order, as the directory is read), each file's in the order they were found.
    static func warnings(of manifests: [HandlerManifest], catalog: TypeCatalog, extra: [ManifestWarning] = []) -> [ManifestWarning] {
        var all = manifests.flatMap(\.warnings) + extra
        all += catalog.issues.map {
            ManifestWarning(code: .init(rawValue: $0.code.rawValue), file: $0.inputFile ?? "", keyPath: $0.inputKey ?? "", message: $0.message)
        }
        return all.enumerated().sorted { ($0.element.file, $0.offset) < ($1.element.file, $1.offset) }.map(\.element)
    }

    /// Whether some handler declares documents of this type (or a parent of it) as packages:
    /// folders delivered whole rather than treated as mailboxes.
    public func isPackageType(_ contentType: String) -> Bool {
        guard !packageTypes.isEmpty else { return false }
        return catalog.conformanceChain(of: contentType).contains { packageTypes.contains($0.lowercased()) }
    }

    /// The types a document-type entry claims: `LSItemContentTypes`, else the legacy extension and
    /// MIME keys mapped through the catalog (a tag nobody declares becomes its `dyn.` type).
    static func resolvedTypes(of claim: DocumentTypeClaim, in catalog: TypeCatalog) -> [String] {
        if !claim.contentTypes.isEmpty { return claim.contentTypes.map { catalog.canonicalIdentifier($0) } }
        var result: [String] = []
        for tag in claim.legacyExtensions where tag != "*" {
            let type = catalog.preferredType(forFilenameExtension: tag)
                ?? DynamicTypeIdentifier(tagClass: .filenameExtension, tag: tag.lowercased()).identifier
            if !result.contains(type) { result.append(type) }
        }
        for tag in claim.legacyMIMETypes where tag != "*" {
            let type = catalog.preferredType(forMIMEType: tag)
                ?? DynamicTypeIdentifier(tagClass: .mimeType, tag: TypeCatalog.normalizedMIMEType(tag)).identifier
            if !result.contains(type) { result.append(type) }
        }
        return result
    }
}
