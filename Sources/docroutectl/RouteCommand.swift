import ArgumentParser
import DocRouteHandlers
import DocRouteIntake
import DocRouteTypes
import Foundation

struct RouteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "route",
        abstract: "Show which handler a file or URL would go to, and why (a dry run: nothing is delivered).",
        discussion: """
            Says when the administrator's default decided, and when a default was passed over because \
            its handler cannot open the document. A folder is shown as intake takes it: a package \
            document (Report.rtfd, or a type a handler declares with LSTypeIsPackage) is routed as one \
            document; any other folder is a mailbox folder, whose files go to the mailbox named after \
            it (or the mailbox it is in), each routed as a file: they are listed, up to \(RouteCommand.folderListLimit).
            """)

    @OptionGroup var options: HandlerOptions

    @Flag(help: "Print JSON.")
    var json = false

    @Argument(help: "File paths, or URLs such as todolist://www.acme.com?Quarterly%20Report#200806231300.")
    var inputs: [String]

    func validate() throws {
        guard !inputs.isEmpty else { throw ValidationError("give at least one path or URL") }
    }

    func run() throws {
        let registry = try options.registry()
        let selector = HandlerSelector(registry: registry, defaults: try options.defaults())
        let engine = TypeEngine(catalog: registry.catalog, mimeDatabase: MIMEDatabase.loadSystemOrBuiltin())
        // One JSON object for one input (as before), an array for several.
        var objects: [[String: Any]] = []
        for (index, input) in inputs.enumerated() {
            if !json && index > 0 { print("") }
            objects.append(try route(input, registry: registry, selector: selector, engine: engine))
        }
        if json { try JSONOutput.print(objects.count == 1 ? objects[0] as Any : objects as Any) }
    }

    /// Routes one input; prints it unless --json, and returns its JSON object.
    func route(_ input: String, registry: HandlerRegistry, selector: HandlerSelector, engine: TypeEngine) throws -> [String: Any] {
        var contentType: String?
        var isPackage = false
        let selection: HandlerSelection
        // Every handler that could open it, as docrouted's `candidates` (Open In…) lists them;
        // the first ones are those the decision was made among.
        let candidates: [HandlerCandidate]
        if let scheme = Self.scheme(of: input), scheme != "file" {
            selection = selector.select(scheme: scheme)
            candidates = selector.openInCandidates(scheme: scheme)
        } else {
            let path = input.hasPrefix("file://") ? (URL(string: input)?.path ?? input) : input
            var isFolder: ObjCBool = false
            let name = (path as NSString).lastPathComponent
            isPackage = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
                && PackageFolders.isPackage(named: name, engine: engine, registry: registry)
            if isFolder.boolValue && !isPackage {
                return try routeMailboxFolder(input, path: path, registry: registry, selector: selector, engine: engine)
            }
            let classification: TypeClassification
            // A package is typed by its name alone, as intake types it.
            switch isPackage ? .success(engine.classify(filename: name)) : FileTyping.type(path: path, engine: engine) {
            case .success(let typed): classification = typed
            case .failure(let message):
                // A name alone still routes (what would happen if such a file arrived).
                guard message.description == "no such file" else { throw ValidationError("\(path): \(message)") }
                classification = engine.classify(filename: (path as NSString).lastPathComponent)
            }
            contentType = classification.contentType
            selection = selector.select(contentType: classification.contentType, innerContentType: classification.innerContentType)
            candidates = selector.openInCandidates(contentType: classification.contentType, innerContentType: classification.innerContentType)
        }
        // What a candidate's manifest said that was read otherwise may be why it is (or is not) chosen.
        let candidateFiles = Set(selection.candidates.compactMap { registry.handler(for: $0.bundleIdentifier)?.manifest.file })
        let warnings = registry.warnings.filter { candidateFiles.contains($0.file) }
        var object: [String: Any] = [
            "input": input,
            "contentType": JSONOutput.orNull(contentType),
            "bundleIdentifier": JSONOutput.orNull(selection.bundleIdentifier),
            "candidates": candidates.map {
                ["bundleIdentifier": $0.bundleIdentifier, "matchedType": $0.matchedType, "rank": $0.rank.rawValue, "role": $0.role.rawValue] as [String: Any]
            },
            "reason": selection.reason,
            "warnings": warnings.map { ["file": $0.file, "keyPath": $0.keyPath, "code": $0.code.rawValue, "message": $0.message] },
            "failedManifests": registry.failures.map(\.file),
            "package": isPackage,
        ]
        if let decision = selection.adminDefault {
            object["adminDefault"] = [
                "key": decision.key, "bundleIdentifier": decision.bundleIdentifier, "decided": decision.decided,
                "passedOverReason": JSONOutput.orNull(decision.passedOverReason),
            ] as [String: Any]
        }
        if !json {
            print(contentType.map { "\(input): \($0)" } ?? "\(input):")
            var verdict = selection.bundleIdentifier.map { "→ \($0)" } ?? "→ no handler (the file would be quarantined)"
            if selection.adminDefault?.decided == true { verdict += " (the administrator's default)" }
            print(verdict)
            print("  \(selection.reason)")
            if isPackage { print("  a package document: intake delivers the folder whole, as one document") }
            for (index, candidate) in candidates.enumerated() {
                var notes: [String] = [candidate.rank.rawValue, candidate.role.rawValue]
                if candidate.isAdminDefault { notes.append("admin default") }
                if candidate.claimsInnerType { notes.append("claims inner type") }
                print("  \(index + 1). \(candidate.bundleIdentifier) via \(candidate.matchedType) (\(notes.joined(separator: ", ")))")
            }
            for warning in warnings { print("  warning \(warning)") }
            if !registry.failures.isEmpty {
                print("  \(registry.failures.count) manifest\(registry.failures.count == 1 ? "" : "s") failed to load and took no part (docroutectl handlers says why)")
            }
        }
        return object
    }

    /// The scheme of `input` when it is a URL (RFC 3986 scheme followed by ':'), not a path.
    static func scheme(of input: String) -> String? {
        guard let colon = input.firstIndex(of: ":") else { return nil }
        let scheme = String(input[..<colon])
        return URLSchemeClaim.isValidScheme(scheme) && !scheme.contains("/") ? scheme.lowercased() : nil
    }
}
