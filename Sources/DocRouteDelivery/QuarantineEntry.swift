import DocRouteConfiguration
import DocRouteIntake
import DocRoutePlatform
import Foundation
import SystemPackage

/// Quarantines an inbox entry by name: a regular file through ``Quarantine`` (copied if it must
/// cross file systems), anything else (a link, a FIFO, a device) by renaming the entry itself,
/// which never follows or opens it.
package enum QuarantineEntry {
    static func move(name: [UInt8], in folder: Int32, to directory: String, mailbox: String, reason: String, origin: String?, quarantine: Quarantine) throws {
        let inbox = FileDescriptor(rawValue: folder)
        let base = InboxNames.display(name).replacingOccurrences(of: "/", with: "_")
        guard let entry = FilePath.Component(platformBytes: name) else {
            throw DeliveryError(code: .invalidName, message: "\(base) names no entry of the inbox. \(DeliveryError.advice(for: .invalidName))")
        }
        // A regular file goes through Quarantine; anything else, or a file that cannot be
        // opened or inspected, is moved by its name below.
        if let file = try? inbox.open(entry, .readOnly, options: [.nonBlocking, .noControllingTerminal]) {
            defer { file.closeIgnoringErrors() }
            if let status = try? file.status(), status.isRegularFile {
                try quarantine.quarantine(
                    source: file, sourceStatus: status, sourcePath: FilePath(InboxNames.display(name)),
                    sourceDirectory: inbox,
                    sourceName: FilePath.Component(platformBytes: name) ?? FilePath.Component("document"),
                    mailbox: mailbox, contentType: nil, reason: reason, origin: origin)
                return
            }
        }
        let target = directory + "/" + (DaemonConfiguration.isValidMailbox(mailbox) ? mailbox : "Inbox")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        let targetFolder = try DeliveryError.performing("open folder", target) { try FileDescriptor.openDirectory(atPath: FilePath(target)) }
        defer { targetFolder.closeIgnoringErrors() }
        var candidate = base
        var counter = 0
        var destination: String { target + "/" + candidate }
        var moved = true
        while true {
            guard let component = FilePath.Component(candidate), let reasonName = FilePath.Component(candidate + ".reason") else {
                throw DeliveryError(code: .invalidName, message: "\(base): no quarantine name can be made from it. \(DeliveryError.advice(for: .invalidName))")
            }
            let taken = try DeliveryError.performing("inspect", destination) {
                try targetFolder.status(of: component) != nil || targetFolder.status(of: reasonName) != nil
            }
            if !taken {
                do throws(Errno) {
                    // Never over a name taken meanwhile: the next candidate then.
                    if try inbox.renameNoReplace(entry, to: component, in: targetFolder) { break }
                } catch .improperLink {
                    let found = try? inbox.status(of: entry)
                    if found?.isDirectory == true {
                        // A package folder is a document: never removed in place of a move.
                        throw DeliveryError(code: DeliveryError.code(for: .improperLink),
                                            message: "cannot move the package \(base) to quarantine across file systems; put quarantine_directory on the inbox's file system",
                                            cause: Errno.improperLink)
                    }
                    // A link or a FIFO has no content worth carrying across file systems.
                    _ = try? inbox.unlink(entry)
                    moved = false
                    break
                } catch {
                    throw DeliveryError(code: DeliveryError.code(for: error), message: "cannot move \(base) to quarantine", cause: error)
                }
            }
            counter += 1
            candidate = "\(base)-\(counter)"
        }
        let line = Quarantine.reasonLine(reason: moved ? reason : reason + " (removed: it could not be moved across file systems)", contentType: nil, date: Date(), origin: origin)
        // The reason is a note beside the entry: the entry is moved whether or not it can be written.
        // It is written under a temporary name and renamed, so that a reader (an operator, a
        // script, `docroutectl quarantine list`) never finds it empty or cut short.
        var names = SandboxWriter.TemporaryNames()
        if let reasonName = FilePath.Component(candidate + ".reason"),
           let temporaryName = FilePath.Component(names.next()),
           let reasonFile = try? targetFolder.open(temporaryName, .writeOnly, options: [.create, .exclusiveCreate], permissions: 0o640) {
            let written = (try? Array(line.utf8).withUnsafeBytes { buffer in try reasonFile.writeAll(from: buffer) }) != nil
                && (try? reasonFile.sync()) != nil
            reasonFile.closeIgnoringErrors()
            if !written || (try? targetFolder.rename(temporaryName, to: reasonName, in: targetFolder)) == nil {
                _ = try? targetFolder.unlink(temporaryName)
            }
        }
        _ = try? targetFolder.sync()
    }
}
