import DocRouteTypes

/// A handler as its Info.plist describes it: the Apple keys that say what it opens, and the
/// docroute keys that say how it runs on Linux.
public struct HandlerManifest: Sendable, Hashable {
    /// `CFBundleIdentifier`.
    public var bundleIdentifier: String
    /// `CFBundleName`.
    public var name: String?
    /// `CFBundleDocumentTypes`.
    public var documentTypes: [DocumentTypeClaim]
    /// `UTExportedTypeDeclarations`: types this handler owns.
    public var exportedTypes: [TypeDeclaration]
    /// `UTImportedTypeDeclarations`: types this handler uses and describes.
    public var importedTypes: [TypeDeclaration]
    /// Where each exported and imported declaration stood in the file, for reports.
    public var declarationKeyPaths: [String] = []
    /// `CFBundleURLTypes`.
    public var urlTypes: [URLSchemeClaim]
    /// `DocRouteUser` (root when absent).
    public var user: HandlerUser
    /// `DocRouteLaunchCommand`: how to start the handler when a document waits and it is not subscribed.
    public var launchCommand: [String]?
    /// `DocRouteContainer`: the sandbox root; nil means `<containers_directory>/<bundle identifier>`.
    public var container: String?
    /// `DocRouteInboxRetentionDays`: days after its acknowledgement that docrouted removes a copy
    /// from `Documents/Inbox/`; nil keeps every copy until the handler removes it.
    public var inboxRetentionDays: Double?
    /// The file the manifest was read from.
    public var file: String
    /// What was read otherwise than written (a skipped document type, a trimmed value), in file order.
    public var warnings: [ManifestWarning] = []

    public init(
        bundleIdentifier: String, name: String? = nil, documentTypes: [DocumentTypeClaim] = [],
        exportedTypes: [TypeDeclaration] = [], importedTypes: [TypeDeclaration] = [],
        urlTypes: [URLSchemeClaim] = [], user: HandlerUser = .root, launchCommand: [String]? = nil,
        container: String? = nil, file: String = ""
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.name = name
        self.documentTypes = documentTypes
        self.exportedTypes = exportedTypes
        self.importedTypes = importedTypes
        self.urlTypes = urlTypes
        self.user = user
        self.launchCommand = launchCommand
        self.container = container
        self.file = file
    }

    /// The key path of the n-th exported or imported declaration as it stood in the file.
    func keyPath(ofDeclaration index: Int, exported: Bool) -> String {
        let position = exported ? index : exportedTypes.count + index
        if position < declarationKeyPaths.count { return declarationKeyPaths[position] }
        return exported ? "UTExportedTypeDeclarations[\(index)]" : "UTImportedTypeDeclarations[\(index)]"
    }

    /// Every URL scheme claimed, lower-cased.
    public var schemes: [String] { urlTypes.flatMap(\.schemes) }
}
