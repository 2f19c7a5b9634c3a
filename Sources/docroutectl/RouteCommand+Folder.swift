import DocRouteConfiguration
import DocRouteHandlers
import DocRouteIntake
import DocRoutePlatform
import DocRouteTypes
import Foundation
import SystemPackage

extension RouteCommand {
    /// How many of a mailbox folder's files `route` lists.
    static let folderListLimit = 20

    /// Where a folder's files go: the mailbox each one would arrive in.
    enum FolderPlace {
        /// Not in a configured inbox: what happens when it is dropped at the top of one.
        case dropped(mailbox: String)
        /// At or below a mailbox folder of this inbox: every file goes to that mailbox.
        case inMailbox(inbox: String, mailbox: String)
        /// The inbox itself: files at its top go to its default mailbox, the others to the mailbox
        /// folder they are in.
        case inbox(path: String, defaultMailbox: String)

        func mailbox(ofFileAt components: [String]) -> String {
            switch self {
            case .dropped(let mailbox), .inMailbox(_, let mailbox): mailbox
            case .inbox(_, let defaultMailbox): components.count == 1 ? defaultMailbox : components[0]
            }
        }
    }

    /// A folder that is not a package: intake treats it as a mailbox folder (or a folder inside
    /// one), whose files are routed one by one. Lists them as they would be routed, up to
    /// ``folderListLimit``.
    func routeMailboxFolder(_ input: String, path: String, registry: HandlerRegistry, selector: HandlerSelector, engine: TypeEngine) throws -> [String: Any] {
        let name = (path as NSString).lastPathComponent
        let place = folderPlace(path)
        var files: [(components: [String], path: String)] = []
        var total = 0
        collect(path, components: [], depth: 0, engine: engine, registry: registry, into: &files, total: &total)
        var listed: [[String: Any]] = []
        for file in files {
            let typed: TypeClassification
            var isPackage: ObjCBool = false
            // A package inside is typed by its name alone, as intake types it.
            if FileManager.default.fileExists(atPath: file.path, isDirectory: &isPackage), isPackage.boolValue {
                typed = engine.classify(filename: file.components.last ?? "")
            } else if case .success(let classification) = FileTyping.type(path: file.path, engine: engine) {
                typed = classification
            } else {
                typed = engine.classify(filename: file.components.last ?? "")
            }
            let selection = selector.select(contentType: typed.contentType, innerContentType: typed.innerContentType)
            listed.append([
                "path": file.components.joined(separator: "/"), "contentType": typed.contentType,
                "bundleIdentifier": JSONOutput.orNull(selection.bundleIdentifier), "mailbox": place.mailbox(ofFileAt: file.components),
            ])
        }
        var reason: String
        switch place {
        case .dropped(let mailbox):
            reason = DaemonConfiguration.isValidMailbox(mailbox) && !InboxNames.isInProgress(Array(mailbox.utf8))
                ? "a mailbox folder: dropped into an inbox, its files go to mailbox \(mailbox), each routed as a file (inside a mailbox folder, to that mailbox)"
                : "a folder whose name cannot be a mailbox: dropped at the top of an inbox it is ignored and its files are not delivered (inside a mailbox folder, they go to that mailbox)"
        case .inMailbox(let inbox, let mailbox):
            reason = "a mailbox folder of the inbox \(inbox): its files go to mailbox \(mailbox), each routed as a file"
        case .inbox(let path, let defaultMailbox):
            reason = "the inbox \(path): files at its top go to mailbox \(defaultMailbox), those in a folder to the mailbox named after it, each routed as a file"
        }
        let object: [String: Any] = [
            "input": input, "contentType": "public.folder", "bundleIdentifier": NSNull(), "candidates": [Any](),
            "reason": reason, "warnings": [Any](), "failedManifests": registry.failures.map(\.file), "package": false,
            "folder": ["kind": "mailbox", "files": listed, "fileCount": total, "filesNotListed": total - listed.count] as [String: Any],
        ]
        if !json {
            print("\(input): public.folder")
            print("→ \(reason)")
            if total == 0 { print("  (no files in it yet)") }
            for entry in listed {
                let handler = (entry["bundleIdentifier"] as? String).map { "→ \($0)" } ?? "→ no handler (it would be quarantined)"
                print("  \(entry["path"] ?? ""): \(entry["contentType"] ?? "") \(handler) (mailbox \(entry["mailbox"] ?? ""))")
            }
            if total > listed.count { print("  … and \(total - listed.count) more file\(total - listed.count == 1 ? "" : "s")") }
            if name.hasPrefix(".") { print("  a hidden folder: intake leaves it alone until it is renamed") }
        }
        return object
    }

    /// Which configured inbox the folder is in, if any (paths compared with links resolved).
    func folderPlace(_ path: String) -> FolderPlace {
        let name = (path as NSString).lastPathComponent
        let inboxes = (try? options.configuration().inboxes) ?? []
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.pathComponents
        for inbox in inboxes where inbox.kind == .directory {
            let root = URL(fileURLWithPath: inbox.path).resolvingSymlinksInPath().standardizedFileURL.pathComponents
            guard resolved.starts(with: root) else { continue }
            let relative = Array(resolved.dropFirst(root.count))
            guard let mailbox = relative.first else { return .inbox(path: inbox.path, defaultMailbox: inbox.defaultMailbox) }
            return .inMailbox(inbox: inbox.path, mailbox: mailbox)
        }
        return .dropped(mailbox: name)
    }

    /// The files intake would take from a mailbox folder, in name order: not names still being
    /// written (hidden, `.part`, …), not symbolic links (intake never follows one), folders
    /// followed as deep as intake follows them, a package inside counted as one document.
    func collect(_ folder: String, components: [String], depth: Int, engine: TypeEngine, registry: HandlerRegistry,
                 into files: inout [(components: [String], path: String)], total: inout Int) {
        guard depth < IntakePipeline.nestedFolderDepth, let opened = try? FileDescriptor.openDirectory(atPath: FilePath(folder)) else { return }
        defer { opened.closeIgnoringErrors() }
        guard let entries = try? opened.directoryEntries() else { return }
        for entry in entries.sorted(by: { $0.nameBytes.lexicographicallyPrecedes($1.nameBytes) }) where !InboxNames.isInProgress(entry.nameBytes) {
            let name = InboxNames.display(entry.nameBytes)
            let path = folder + "/" + name
            // Never through a symbolic link, as intake.
            guard let status = try? opened.status(of: entry.name) else { continue }
            if status.isDirectory && !PackageFolders.isPackage(named: name, engine: engine, registry: registry) {
                collect(path, components: components + [name], depth: depth + 1, engine: engine, registry: registry, into: &files, total: &total)
                continue
            }
            guard status.isRegularFile || status.isDirectory else { continue }
            total += 1
            if files.count < Self.folderListLimit { files.append((components + [name], path)) }
        }
    }
}
