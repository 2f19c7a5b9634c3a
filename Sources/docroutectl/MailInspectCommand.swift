import ArgumentParser
import DocRouteHandlers
import DocRouteIntake
import DocRouteMail
import DocRouteMaildir
import DocRoutePlatform
import DocRouteTypes
import Foundation
import SystemPackage

/// `docroutectl mail inspect FILE`: what the mail drop would deliver from one message, and why.
struct MailInspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show each part of a mail message that the mail drop would deliver, without delivering anything.",
        discussion: """
            Reads FILE (a message as a Maildir holds it, an .eml, or one with an mbox "From " line first) \
            with docrouted's own parser and extraction, types each attachment as docrouted types it (its \
            file name, its first bytes and its Content-Type) and names the handler of --handlers that \
            would get it. For each part: the IMAP part path (2, 3.1), the file name it would be \
            delivered under, the MIME type the mail gave, the type, the decoded size, the damage \
            (truncated-encoding, bad-padding, unterminated, invalid-characters: the part is delivered \
            with what decoded, and the handler's annotation says so) and the handler, or why it would \
            be skipped. An attached message (message/rfc822) is one part of its own, an .eml with the \
            exact bytes of that message, besides the attachments inside it. The last line says whether \
            docrouted would mark the message read (move it to cur/) or leave it in new/.

            Nothing is delivered and no ledger is read: a part already delivered by docrouted is \
            shown all the same. The attachments are decoded into a temporary folder (in $TMPDIR, else \
            /tmp) that is removed before the command ends.

            Exit status: 0 when FILE was read as a mail message (whatever its parts' damage); 1 when \
            it is not one (empty, or no header: docrouted leaves such a file in new/) or cannot be read.
            """)

    @OptionGroup var options: HandlerOptions

    @Flag(help: "Print one JSON object: the envelope, the parts, the problems and the verdict.")
    var json = false

    @Argument(help: "The message file.")
    var file: String

    func run() throws {
        let registry = try options.registry()
        let selector = HandlerSelector(registry: registry, defaults: (try? options.defaults()) ?? AdminDefaults())
        let engine = TypeEngine(catalog: registry.catalog, mimeDatabase: MIMEDatabase.loadSystemOrBuiltin())
        let maximumSize = (try? options.configuration().maxFileSize) ?? .max

        let message: FileDescriptor
        do {
            message = try FileDescriptor.open(FilePath(file), .readOnly, options: [.noFollow, .closeOnExec])
        } catch {
            throw fail("\(file): cannot be read: \(error)")
        }
        defer { try? message.close() }
        let temporary = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((temporary + "/docroutectl-mail.XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else {
            throw fail("cannot create a temporary folder in \(temporary): \(Errno(rawValue: errno)); set TMPDIR to a writable folder")
        }
        let scratchPath = String(cString: created)
        defer { try? FileManager.default.removeItem(atPath: scratchPath) }
        let scratch: FileDescriptor
        do {
            scratch = try FileDescriptor.openDirectory(atPath: FilePath(scratchPath))
        } catch {
            throw fail("cannot open \(scratchPath): \(error)")
        }
        defer { try? scratch.close() }

        let extractor = MaildirAttachmentExtractor(
            scratch: scratch, scratchPath: scratchPath, maximumAttachmentSize: maximumSize, logger: HandlerOptions.logger)
        let extraction: MaildirExtraction
        do {
            extraction = try extractor.extract(message: message, messagePath: file)
        } catch {
            throw fail("\(file): cannot be read: \(error)")
        }
        defer { extraction.removeTemporaryFiles(in: scratch) }
        let summary = extraction.summary
        if summary.isMalformed {
            let problems = summary.problems.filter(\.isFatal).map(\.description).joined(separator: "; ")
            if json {
                try JSONOutput.print(["file": file, "mail": false, "problems": summary.problems.map(Self.problemJSON),
                                      "verdict": "not a mail message: docrouted leaves it in new/"] as [String: Any])
            } else {
                printError("\(file): not a mail message (\(problems)); docrouted would leave it in new/ and count it as unreadable")
            }
            throw ExitCode(1)
        }

        var parts: [Part] = []
        for attachment in extraction.attachments {
            var part = Part(attachment: attachment)
            if attachment.isUnrecoverable {
                part.outcome = "skipped: damaged and nothing decoded"
            } else if let route = MaildirAttachmentRoute.route(attachment, scratch: scratch.rawValue, engine: engine, selector: selector) {
                close(route.file.descriptor)
                part.contentType = route.classification.contentType
                part.handler = route.handler?.bundleIdentifier
                part.outcome = route.handler.map { "→ \($0.bundleIdentifier)" } ?? "skipped: no handler claims \(route.classification.contentType)"
            }
            parts.append(part)
        }
        for info in extraction.oversized {
            var part = Part(info: info)
            part.outcome = "skipped: over max_file_size (\(maximumSize) bytes)"
            parts.append(part)
        }
        let order = Dictionary(summary.attachments.enumerated().map { ($1.info.partPath, $0) }, uniquingKeysWith: { first, _ in first })
        parts.sort { (order[$0.partPath] ?? .max) < (order[$1.partPath] ?? .max) }
        let verdict: String
        if extraction.nothingRecoverable {
            verdict = "nothing in it can be recovered: docrouted leaves it in new/ and counts it as unreadable"
        } else if !summary.isMIME {
            verdict = "not MIME (a plain text mail): no attachments; docrouted marks it read (cur/, flag S)"
        } else {
            verdict = "docrouted delivers what has a handler and marks the message read (cur/, flag S)"
        }

        if json {
            let envelope = summary.envelope
            try JSONOutput.print([
                "file": file, "mail": true, "mime": summary.isMIME,
                "envelope": ["from": JSONOutput.orNull(envelope.from), "subject": JSONOutput.orNull(envelope.subject),
                             "messageID": JSONOutput.orNull(envelope.messageID), "date": JSONOutput.orNull(envelope.date)],
                "parts": parts.map(\.json),
                "problems": summary.problems.map(Self.problemJSON),
                "verdict": verdict,
            ] as [String: Any])
            return
        }
        print("\(file)")
        if let from = summary.envelope.from { print("  From:       \(from)") }
        if let subject = summary.envelope.subject { print("  Subject:    \(subject)") }
        if let messageID = summary.envelope.messageID { print("  Message-ID: \(messageID)") }
        if parts.isEmpty {
            print("no parts to deliver")
        } else {
            var rows = [["PART", "NAME", "MIME HINT", "TYPE", "SIZE", "DAMAGE", "HANDLER"]]
            for part in parts {
                rows.append([part.partPath, part.fileName, part.mimeType, part.contentType ?? "-", part.size.map(String.init) ?? "-",
                             part.damage.isEmpty ? "-" : part.damage.joined(separator: ","), part.outcome])
            }
            TablePrinter.print(rows)
        }
        for problem in summary.problems { print("problem: \(problem)") }
        print(verdict)
    }

    /// One row: a part that would be delivered, or why not.
    struct Part {
        var partPath: String
        var fileName: String
        var originalFileName: String?
        var mimeType: String
        var contentType: String?
        var size: Int64?
        var damage: [String]
        var handler: String?
        var outcome = ""

        init(attachment: MaildirAttachment) {
            partPath = attachment.partPath
            fileName = attachment.fileName
            originalFileName = attachment.originalFilename
            mimeType = attachment.mimeType
            size = attachment.size
            damage = attachment.damage.words
        }

        init(info: MailAttachmentInfo) {
            partPath = info.partPath
            fileName = info.fileName
            originalFileName = info.originalFileName
            mimeType = info.mimeType
            damage = []
        }

        var json: [String: Any] {
            [
                "partPath": partPath, "fileName": fileName, "originalFilename": JSONOutput.orNull(originalFileName),
                "mimeType": mimeType, "contentType": JSONOutput.orNull(contentType), "size": size.map { $0 as Any } ?? NSNull(),
                "damage": damage, "bundleIdentifier": JSONOutput.orNull(handler), "outcome": outcome,
            ]
        }
    }

    static func problemJSON(_ problem: MailProblem) -> [String: Any] {
        ["code": problem.code.rawValue, "partPath": problem.partPath, "message": problem.message]
    }

    func fail(_ text: String) -> ExitCode {
        printError(text)
        return ExitCode(1)
    }

    func printError(_ text: String) {
        FileHandle.standardError.write(Data(("docroutectl mail inspect: " + text + "\n").utf8))
    }
}
