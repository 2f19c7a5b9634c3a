import DocRouteConfiguration
import DocRouteHandlers
import DocRouteIntake
import DocRouteMaildir
import DocRoutePlatform
import Foundation
import SystemPackage

/// One file in `<quarantine_directory>/<mailbox>/`, with what its `.reason` file says, or one mail
/// attachment nobody claims, recorded as an entry naming its message (``QuarantinedMailPart``).
struct QuarantinedFile {
    var path: String
    var mailbox: String
    var reason: String
    var contentType: String?
    var quarantinedAt: Date?
    /// Where docrouted found it (the reason file's `from` line; absent in older ones).
    var origin: String?
    var size: Int64
    var isRegularFile: Bool
    /// For a mail attachment: its entry (the attachment's bytes stay in the message).
    var mailPart: QuarantinedMailPart?

    /// Every quarantined file under `directory`, oldest first.
    static func all(in directory: String) throws(CtlError) -> [QuarantinedFile] {
        var files: [QuarantinedFile] = []
        let mailboxes: [String]
        do {
            mailboxes = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            guard FileManager.default.fileExists(atPath: directory) else { return [] }  // nothing quarantined yet
            throw CtlError("cannot list the quarantine \(directory): \(Errno.permissionDenied.systemMessage); run as root or as docrouted's user")
        }
        for mailbox in mailboxes.sorted() {
            let folder = directory + "/" + mailbox
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names.sorted() where !name.hasSuffix(SandboxName.quarantineReasonSuffix) && !SandboxName.isTemporaryName(name) {
                files.append(read(folder + "/" + name, mailbox: mailbox))
            }
        }
        return files.sorted { ($0.quarantinedAt ?? .distantPast) < ($1.quarantinedAt ?? .distantPast) }
    }

    /// The file at `path` and its reason; a mail part entry (a `.mailpart` file without a reason
    /// beside it that reads as one) with what it records.
    static func read(_ path: String, mailbox: String) -> QuarantinedFile {
        let info = try? FilePath(path).status(followingSymbolicLinks: false)
        var file = QuarantinedFile(
            path: path, mailbox: mailbox, reason: "no .reason file beside it", contentType: nil, quarantinedAt: nil, origin: nil,
            size: info?.size ?? 0, isRegularFile: info?.isRegularFile ?? false)
        let reasonPath = path + SandboxName.quarantineReasonSuffix
        if file.isRegularFile, path.hasSuffix(QuarantinedMailPart.suffix), (info?.size ?? 0) <= QuarantinedMailPart.maximumEntrySize,
           (try? FilePath(reasonPath).status(followingSymbolicLinks: false)) == nil, let bytes = FileManager.default.contents(atPath: path), let entry = QuarantinedMailPart.decode(bytes) {
            file.mailPart = entry
            file.reason = entry.reason
            file.contentType = entry.contentType
            file.quarantinedAt = try? Date(entry.quarantinedAt, strategy: .iso8601)
            file.size = entry.size
            file.origin = entry.messagePath() ?? entry.maildir + "/" + entry.messageFolder(MaildirLayout.curFolder) + "/" + entry.messageName
            return file
        }
        guard let text = try? String(contentsOfFile: reasonPath, encoding: .utf8) else { return file }
        let lines = text.split(separator: "\n").map(String.init)
        if var first = lines.first {
            // "<reason> (content type X, quarantined 2026-11-23T10:00:00Z)"
            if let open = first.range(of: " (content type ", options: .backwards), first.hasSuffix(")") {
                let inside = first[open.upperBound..<first.index(before: first.endIndex)]
                let parts = inside.components(separatedBy: ", quarantined ")
                if parts.count == 2 {
                    file.contentType = parts[0] == "unknown" ? nil : parts[0]
                    file.quarantinedAt = try? Date(parts[1], strategy: .iso8601)
                }
                first = String(first[..<open.lowerBound])
            }
            file.reason = first
        }
        file.origin = lines.dropFirst().first { $0.hasPrefix("from ") }.map { String($0.dropFirst(5)) }
        if file.quarantinedAt == nil, let reason = try? FilePath(reasonPath).status(followingSymbolicLinks: true) {
            file.quarantinedAt = Date(timeIntervalSince1970: TimeInterval(reason.modificationTimeNanoseconds / 1_000_000_000))
        }
        return file
    }

    /// The name it came with: a mail part's file name, else the last part of where it was found.
    var originalName: String {
        mailPart?.fileName ?? origin.map { ($0 as NSString).lastPathComponent } ?? (path as NSString).lastPathComponent
    }

    /// The configured inbox it came from: the one whose path holds `origin`; without an origin,
    /// the first drop-folder inbox.
    func inbox(in configuration: DaemonConfiguration) -> InboxConfiguration? {
        if let origin {
            return configuration.inboxes
                .filter { origin.hasPrefix($0.path.hasSuffix("/") ? $0.path : $0.path + "/") }
                .max { $0.path.count < $1.path.count }
        }
        return configuration.inboxes.first { $0.kind == .directory }
    }

    /// "3 min", "2 h", "5 d".
    static func age(since date: Date?, now: Date = Date()) -> String {
        guard let date else { return "-" }
        let seconds = max(0, Int(now.timeIntervalSince(date)))
        switch seconds {
        case ..<60: return "\(seconds) s"
        case ..<3600: return "\(seconds / 60) min"
        case ..<86_400: return "\(seconds / 3600) h"
        default: return "\(seconds / 86_400) d"
        }
    }
}

extension QuarantinedMailPart {
    /// Where the message is now: `cur/<unique>:2,<flags>` (whatever flags a mail client gave it),
    /// or still `new/<unique>`; nil when it is in neither.
    func messagePath() -> String? {
        for leaf in [MaildirLayout.curFolder, MaildirLayout.newFolder] {
            let folder = maildir + "/" + messageFolder(leaf)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            if let name = names.first(where: { MaildirMessageName.unique(Array($0.utf8)) == Array(messageName.utf8) }) {
                return folder + "/" + name
            }
        }
        return nil
    }
}
