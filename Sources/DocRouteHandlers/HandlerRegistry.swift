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

    /// Builds a registry. Manifests sharing a bundle identifier are all refused (neither is loaded).
    public init(manifests: [HandlerManifest], failures: [ManifestFailure] = [], typeIssues: [TypeCatalogIssue] = []) {
        var failures = failures
        var byIdentifier: [String: [HandlerManifest]] = [:]
        for manifest in manifests { byIdentifier[manifest.bundleIdentifier.lowercased(), default: []].append(manifest) }
        var accepted: [HandlerManifest] = []
        for (_, group) in byIdentifier {
            if group.count == 1 { accepted.append(group[0]); continue }
            let files = group.map(\.file).sorted()
            for manifest in group {
                failures.append(ManifestFailure(
                    file: manifest.file, bundleIdentifier: manifest.bundleIdentifier,
                    error: ManifestError(
                        code: .duplicateIdentifier, inputFile: manifest.file, inputKey: "CFBundleIdentifier",
                        message: "'\(manifest.bundleIdentifier)' is declared by \(files.joined(separator: " and ")); neither is loaded until one is renamed or removed")))
            }
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
        self.catalog = catalog
        self.handlers = handlers
        self.failures = failures.sorted { $0.file < $1.file }
        self.warnings = Self.warnings(of: accepted, catalog: catalog)
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

    /// The handler with this bundle identifier (case-insensitive), if loaded.
    public func handler(for bundleIdentifier: String) -> RegisteredHandler? {
        indexByBundleIdentifier[bundleIdentifier.lowercased()].map { handlers[$0] }
    }

    /// Problems in type declarations (skipped declarations, broken cycles), with file and key path.
    public var typeIssues: [TypeCatalogIssue] { catalog.issues }

    /// The manifests' own warnings and the catalog's issues as warnings, grouped by file (in name
    /// order, as the directory is read), each file's in the order they were found.
    static func warnings(of manifests: [HandlerManifest], catalog: TypeCatalog) -> [ManifestWarning] {
        var all = manifests.flatMap(\.warnings)
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
