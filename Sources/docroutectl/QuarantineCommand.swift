import ArgumentParser
import DocRouteConfiguration
import DocRouteHandlers
import DocRouteIntake
import DocRoutePlatform
import DocRouteTypes
import Foundation
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// `docroutectl quarantine list|release`: the files docrouted set aside, and putting them back.
struct QuarantineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quarantine",
        abstract: "List the files docrouted set aside, or put them back through intake.",
        subcommands: [List.self, Release.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Each quarantined file with its reason, age, mailbox and inbox.",
            discussion: "Reads quarantine_directory of the configuration; --json prints one JSON array.")
        @OptionGroup var options: HandlerOptions
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let configuration = try options.configuration()
            let files = try QuarantinedFile.all(in: configuration.quarantineDirectory)
            if json {
                try JSONOutput.print(files.map { file -> [String: Any] in
                    [
                        "path": file.path, "mailbox": file.mailbox, "reason": file.reason,
                        "inbox": JSONOutput.orNull(file.inbox(in: configuration)?.path),
                        "contentType": JSONOutput.orNull(file.contentType), "from": JSONOutput.orNull(file.origin),
                        "quarantinedAt": JSONOutput.orNull(file.quarantinedAt.map { $0.formatted(.iso8601) }),
                        "ageSeconds": file.quarantinedAt.map { Int(Date().timeIntervalSince($0)) } as Any? ?? NSNull(),
                        "size": file.size,
                    ]
                })
                return
            }
            guard !files.isEmpty else {
                print("nothing in quarantine (\(configuration.quarantineDirectory))")
                return
            }
            var rows = [["FILE", "AGE", "MAILBOX", "INBOX", "REASON"]]
            for file in files {
                rows.append([file.path, QuarantinedFile.age(since: file.quarantinedAt), file.mailbox,
                             file.inbox(in: configuration)?.path ?? "-", file.reason])
            }
            TablePrinter.print(rows)
            print("\n\(files.count) file\(files.count == 1 ? "" : "s") in \(configuration.quarantineDirectory); docroutectl quarantine release PATH|--all puts them back once a handler claims them")
        }
    }

    struct Release: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put quarantined files back into their inbox, for docrouted to deliver.",
            discussion: """
                Each file goes back to the inbox and mailbox it came from (renamed in, as a careful \
                sender does), only when a handler now claims it (docroutectl route shows which); its \
                .reason file is removed. A file nobody claims yet, or that is not a regular file, stays \
                and is named. Exits 1 when any file stayed.
                """)
        @OptionGroup var options: HandlerOptions
        @Flag(help: "Release every quarantined file that a handler claims now.") var all = false
        @Argument(help: "Quarantined files (as quarantine list prints them).") var paths: [String] = []

        func validate() throws {
            guard all != !paths.isEmpty else { throw ValidationError("give the quarantined files' paths, or --all") }
        }

        func run() throws {
            let configuration = try options.configuration()
            let quarantine = (configuration.quarantineDirectory as NSString).standardizingPath
            var files: [QuarantinedFile] = []
            if all {
                files = try QuarantinedFile.all(in: quarantine)
                if files.isEmpty { print("nothing in quarantine (\(quarantine))") }
            }
            for path in paths {
                let absolute = ((path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path) as NSString).standardizingPath
                let folder = (absolute as NSString).deletingLastPathComponent
                guard (folder as NSString).deletingLastPathComponent == quarantine else {
                    throw CtlError("\(path) is not a file in the quarantine \(quarantine)/<mailbox>/; docroutectl quarantine list shows them")
                }
                guard FileManager.default.fileExists(atPath: absolute) || (try? FileManager.default.destinationOfSymbolicLink(atPath: absolute)) != nil else {
                    throw CtlError("\(absolute) does not exist; docroutectl quarantine list shows what is in quarantine")
                }
                files.append(QuarantinedFile.read(absolute, mailbox: (folder as NSString).lastPathComponent))
            }
            let registry = try options.registry()
            let selector = HandlerSelector(registry: registry, defaults: try options.defaults())
            let engine = TypeEngine(catalog: registry.catalog, mimeDatabase: MIMEDatabase.loadSystemOrBuiltin())
            var kept = 0
            for file in files {
                do {
                    let (target, handler) = try release(file, configuration: configuration, selector: selector, engine: engine)
                    print("released \(file.path) → \(target) (for \(handler))")
                } catch {
                    kept += 1
                    StandardStreams.error("kept \(file.path): \(error)")
                }
            }
            if kept > 0 { throw ExitCode.failure }
        }

        /// Moves one file back into its inbox; returns where it went and the handler that will get it.
        func release(_ file: QuarantinedFile, configuration: DaemonConfiguration, selector: HandlerSelector, engine: TypeEngine) throws(CtlError) -> (String, String) {
            guard file.isRegularFile else {
                throw CtlError("not a regular file (a link, a FIFO or a folder is never delivered); remove it by hand")
            }
            let classification: TypeClassification
            switch FileTyping.type(path: file.path, engine: engine) {
            case .success(let typed): classification = typed
            case .failure(let message): throw CtlError("cannot read it: \(message)")
            }
            guard let handler = selector.select(contentType: classification.contentType, innerContentType: classification.innerContentType).bundleIdentifier else {
                throw CtlError("still no handler claims \(classification.contentType); install one whose Info.plist claims it or a type it conforms to (docroutectl route \(file.path) shows the candidates)")
            }
            guard let inbox = file.inbox(in: configuration).flatMap({ $0.kind == .directory ? $0 : nil })
                    ?? configuration.inboxes.first(where: { $0.kind == .directory }) else {
                throw CtlError("the configuration has no drop-folder inbox (kind = \"directory\") to put it back in")
            }
            let folder = file.mailbox == inbox.defaultMailbox ? inbox.path : inbox.path + "/" + file.mailbox
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw CtlError("cannot create the mailbox folder \(folder): \(String(cString: strerror(EACCES))); run as root or as docrouted's user")
            }
            let name = file.origin.map { ($0 as NSString).lastPathComponent } ?? (file.path as NSString).lastPathComponent
            let target = folder + "/" + name
            try Self.move(file.path, to: target)
            unlink(file.path + SandboxName.quarantineReasonSuffix)
            return (target, handler)
        }

        /// Renames `source` to `target` without replacing anything; across file systems, copies
        /// under a dot name (which intake leaves alone), syncs, renames into place, then removes
        /// the source, so docrouted only ever sees a complete file.
        static func move(_ source: String, to target: String) throws(CtlError) {
            let from = FilePath(source), to = FilePath(target)
            guard let fromName = from.lastComponent, let toName = to.lastComponent else { throw CtlError("\(target): not a file name") }
            do {
                let fromFolder = try DeliveryError.performing("open folder", from.removingLastComponent().string) {
                    try FileDescriptor.openDirectory(atPath: from.removingLastComponent())
                }
                defer { fromFolder.closeIgnoringErrors() }
                let toFolder = try DeliveryError.performing("open folder", to.removingLastComponent().string) {
                    try FileDescriptor.openDirectory(atPath: to.removingLastComponent())
                }
                defer { toFolder.closeIgnoringErrors() }
                do {
                    let renamed = try DeliveryError.performing("rename", target) { try fromFolder.renameNoReplace(fromName, to: toName, in: toFolder) }
                    guard renamed else {
                        throw CtlError("\(target) already exists in the inbox; move the file by hand under another name")
                    }
                } catch let error as DeliveryError where error.errno == .improperLink {
                    let temporary = to.removingLastComponent().appending(".docroute-release-\(UUID.random().uuidString)")
                    do {
                        try FileManager.default.copyItem(atPath: source, toPath: temporary.string)
                        let descriptor = open(temporary.string, O_RDONLY | O_CLOEXEC)
                        if descriptor >= 0 { fsync(descriptor); close(descriptor) }
                        let renamed = try DeliveryError.performing("rename", target) { try toFolder.renameNoReplace(temporary.lastComponent!, to: toName, in: toFolder) }
                        guard renamed else {
                            unlink(temporary.string)
                            throw CtlError("\(target) already exists in the inbox; move the file by hand under another name")
                        }
                    } catch let error as CtlError {
                        throw error
                    } catch {
                        unlink(temporary.string)
                        throw error
                    }
                    unlink(source)
                }
                try DeliveryError.performing("sync", to.removingLastComponent().string) { try toFolder.sync() }
            } catch let error as CtlError {
                throw error
            } catch {
                throw CtlError("cannot move it to \(target): \(error)")
            }
        }
    }
}
