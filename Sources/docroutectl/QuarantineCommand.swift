import ArgumentParser
import DocRouteClient
import DocRouteConfiguration
import DocRouteHandlers
import DocRouteIntake
import DocRoutePlatform
import DocRouteTypes
import Foundation
import SystemPackage

/// `docroutectl quarantine list|release`: the files and mail attachments docrouted set aside, and
/// delivering them.
struct QuarantineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quarantine",
        abstract: "List the files docrouted set aside, or put them back through intake.",
        subcommands: [List.self, Release.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Each quarantined file with its reason, age, mailbox and inbox, and each mail attachment nobody claims.",
            discussion: """
                Reads quarantine_directory of the configuration; --json prints one JSON array. A mail \
                attachment that no handler claims is listed as a part of its message (message ID, IMAP \
                part number, file name, type, reason): its entry (<name>.mailpart) names the message, \
                whose bytes stay in the Maildir, read or unread, where a mail client finds it.
                """)
        @OptionGroup var options: HandlerOptions
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let configuration = try options.configuration()
            let entries = try QuarantinedFile.all(in: configuration.quarantineDirectory)
            if json {
                try JSONOutput.print(entries.map { file -> [String: Any] in
                    var object: [String: Any] = [
                        "path": file.path, "mailbox": file.mailbox, "reason": file.reason,
                        "kind": file.mailPart == nil ? "file" : "mail-part",
                        "inbox": JSONOutput.orNull(file.inbox(in: configuration)?.path),
                        "contentType": JSONOutput.orNull(file.contentType), "from": JSONOutput.orNull(file.origin),
                        "quarantinedAt": JSONOutput.orNull(file.quarantinedAt.map { $0.formatted(.iso8601) }),
                        "ageSeconds": file.quarantinedAt.map { Int(Date().timeIntervalSince($0)) } as Any? ?? NSNull(),
                        "size": file.size,
                    ]
                    if let part = file.mailPart {
                        object["messageID"] = part.messageID
                        object["partPath"] = part.partPath
                        object["fileName"] = part.fileName
                        object["mimeType"] = part.mimeType
                        object["message"] = JSONOutput.orNull(part.messagePath())
                    }
                    return object
                })
                return
            }
            guard !entries.isEmpty else {
                print("nothing in quarantine (\(configuration.quarantineDirectory))")
                return
            }
            let files = entries.filter { $0.mailPart == nil }
            let parts = entries.filter { $0.mailPart != nil }
            if !files.isEmpty {
                var rows = [["FILE", "AGE", "MAILBOX", "INBOX", "REASON"]]
                for file in files {
                    rows.append([file.path, QuarantinedFile.age(since: file.quarantinedAt), file.mailbox,
                                 file.inbox(in: configuration)?.path ?? "-", file.reason])
                }
                TablePrinter.print(rows)
            }
            if !parts.isEmpty {
                if !files.isEmpty { print("") }
                print("mail attachments nobody claims (their bytes stay in their messages):")
                var rows = [["ENTRY", "AGE", "MAILBOX", "MESSAGE-ID", "PART", "NAME", "TYPE", "REASON"]]
                for file in parts {
                    guard let part = file.mailPart else { continue }
                    rows.append([file.path, QuarantinedFile.age(since: file.quarantinedAt), part.mailbox, part.messageID,
                                 part.partPath, part.fileName, part.mimeType, file.reason])
                }
                TablePrinter.print(rows)
            }
            var counts: [String] = []
            if !files.isEmpty { counts.append("\(files.count) file\(files.count == 1 ? "" : "s")") }
            if !parts.isEmpty { counts.append("\(parts.count) mail attachment\(parts.count == 1 ? "" : "s")") }
            print("\n\(counts.joined(separator: " and ")) in \(configuration.quarantineDirectory); docroutectl quarantine release PATH|--all delivers them once a handler claims them, release --to BUNDLE_ID PATH to a handler of your choice")
        }
    }

    struct Release: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Deliver quarantined files and mail attachments once a handler claims them, or to a handler you pick.",
            discussion: """
                A file goes back to the inbox and mailbox it came from (renamed in, as a careful \
                sender does), only when a handler now claims it (docroutectl route shows which); its \
                .reason file is removed. A mail attachment (an entry ending in .mailpart) is delivered \
                by docrouted, which reads its message again from the Maildir and delivers just that part \
                (the ledger's record of delivered parts keeps it from arriving twice); its entry is \
                removed. That needs docrouted running, and root or its admin_group.

                --to BUNDLE_ID sends one quarantined file or attachment to that handler, which must be \
                one of its Open In… candidates (docroutectl open --list shows them for a file); \
                otherwise docrouted's refusal names the candidates. A file goes by the same `open` \
                request as docroutectl open --with, passed as an open descriptor; once delivered it \
                and its .reason file are removed.

                Anything nobody claims yet, or that is not a regular file, stays and is named. Exits 1 \
                when anything stayed.
                """)
        @OptionGroup var options: HandlerOptions
        @Option(help: ArgumentHelp("docrouted's socket, for mail attachments and --to (default: $DOCROUTE_SOCKET, else socket of the configuration).", valueName: "path"))
        var socket: String?
        @Option(name: .customLong("to"), help: ArgumentHelp("Send the one file or attachment named to this handler, one of its Open In… candidates.", valueName: "bundle-id"))
        var bundleIdentifier: String?
        @Flag(help: "Release every quarantined file and attachment that a handler claims now.") var all = false
        @Argument(help: "Quarantined files and mail attachment entries (as quarantine list prints them).") var paths: [String] = []

        func validate() throws {
            guard all != !paths.isEmpty else { throw ValidationError("give the quarantined files' paths, or --all") }
            if bundleIdentifier != nil && (all || paths.count != 1) {
                throw ValidationError("--to sends one file: give exactly one quarantined path, without --all")
            }
        }

        func run() async throws {
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
            var daemon = ReleaseConnection(socket: socket, options: options, quarantine: configuration.quarantineDirectory)
            var kept = 0
            var local: (selector: HandlerSelector, engine: TypeEngine)?
            for file in files {
                do {
                    if file.mailPart != nil {
                        print(try await daemon.releasePart(file, to: bundleIdentifier))
                    } else if let bundleIdentifier {
                        print(try await daemon.send(file, to: bundleIdentifier))
                    } else {
                        if local == nil {
                            let registry = try options.registry()
                            local = (HandlerSelector(registry: registry, defaults: try options.defaults()),
                                     TypeEngine(catalog: registry.catalog, mimeDatabase: MIMEDatabase.loadSystemOrBuiltin()))
                        }
                        let (target, handler) = try release(file, configuration: configuration, selector: local!.selector, engine: local!.engine)
                        print("released \(file.path) → \(target) (for \(handler))")
                    }
                } catch {
                    kept += 1
                    StandardStreams.error("kept \(file.path): \(error)")
                }
            }
            await daemon.close()
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
                throw CtlError("cannot create the mailbox folder \(folder): \(Errno.permissionDenied.systemMessage); run as root or as docrouted's user")
            }
            let name = file.origin.map { ($0 as NSString).lastPathComponent } ?? (file.path as NSString).lastPathComponent
            let target = folder + "/" + name
            try Self.move(file.path, to: target)
            // The reason belongs to the quarantined file, which is gone: one left over is only clutter.
            _ = try? FilePath(file.path + SandboxName.quarantineReasonSuffix).unlink()
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
                    let temporaryName = FilePath.Component(".docroute-release-\(UUID.random().uuidString)")!
                    let temporary = to.removingLastComponent().appending(temporaryName)
                    do {
                        try FileManager.default.copyItem(atPath: source, toPath: temporary.string)
                        try syncCopy(temporaryName, in: toFolder, path: temporary.string)
                        let renamed = try DeliveryError.performing("rename", target) { try toFolder.renameNoReplace(temporaryName, to: toName, in: toFolder) }
                        guard renamed else {
                            throw CtlError("\(target) already exists in the inbox; move the file by hand under another name")
                        }
                    } catch {
                        // The quarantined file stays; the copy would be a second, half-trusted one.
                        _ = try? toFolder.unlink(temporaryName)
                        throw error
                    }
                    // The copy is durable under its inbox name: the quarantined file may go.
                    _ = try? fromFolder.unlink(fromName)
                }
                try DeliveryError.performing("sync", to.removingLastComponent().string) { try toFolder.sync() }
            } catch let error as CtlError {
                throw error
            } catch {
                throw CtlError("cannot move it to \(target): \(error)")
            }
        }

        /// Makes the copy made across file systems durable before it takes the inbox name and the
        /// quarantined file is removed: a copy a crash loses after that removal loses the document.
        static func syncCopy(_ name: FilePath.Component, in folder: FileDescriptor, path: String) throws(CtlError) {
            do throws(Errno) {
                let copy = try folder.open(name, .readOnly)
                defer { copy.closeIgnoringErrors() }
                try copy.sync()
            } catch {
                throw CtlError("cannot write the copy \(path) to disk (\(error)); the file stays in the quarantine. "
                    + "Check the inbox's file system (free space, and I/O errors in dmesg), then release it again")
            }
        }
    }
}
