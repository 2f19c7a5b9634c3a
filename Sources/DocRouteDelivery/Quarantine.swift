import DocRouteHandlers
import DocRouteIntake
import DocRoutePlatform
import DocRouteProtocol
import Foundation
import Logging
import SystemPackage

/// Moves files nobody handles out of the inboxes into `<quarantine directory>/<mailbox>/`, with
/// a `<name>.reason` file beside each saying why, when, and what type the file was found to be.
///
/// Names follow the sandbox rule (``SandboxName``), with room left for `.reason`. On the same file
/// system the file is renamed (never replacing anything); across file systems it is copied,
/// synced, renamed into place, and only then removed from the inbox. A crash leaves the file either
/// in its inbox or in quarantine (at worst without its reason), never lost.
package struct Quarantine: Sendable {
    /// The quarantine root.
    package let directory: FilePath
    let writer: SandboxWriter
    let logger: Logger

    /// The suffix of reason files.
    package static let reasonSuffix = SandboxName.quarantineReasonSuffix

    /// A quarantine under `directory` (created when first needed).
    package init(directory: FilePath, logger: Logger) {
        self.directory = directory
        self.writer = SandboxWriter()
        self.logger = logger
    }

    /// Moves a source into quarantine and writes its reason.
    ///
    /// - Parameters:
    ///   - source: the source, open (read when it must be copied across file systems).
    ///   - sourceStatus: `fstat` of `source` when opened; the inbox name must still hold that file.
    ///   - sourceDirectory: the inbox folder holding it; `sourceName`: its name there.
    ///   - originalName: the name to keep; `nil` for `sourceName`'s.
    ///   - reason: one line on why (newlines become spaces).
    /// - Returns: the path of the quarantined file; its reason is that path plus `.reason`.
    /// - Throws: ``DeliveryError``; the source is then still in its inbox.
    @discardableResult
    package func quarantine(
        source: FileDescriptor,
        sourceStatus: FileStatus,
        sourcePath: FilePath,
        sourceDirectory: FileDescriptor,
        sourceName: FilePath.Component,
        mailbox: String,
        originalName: String? = nil,
        extensionChain: String = "",
        contentType: String?,
        reason: String,
        origin: String? = nil,
        at date: Date = Date()
    ) throws -> FilePath {
        let folder = try openMailbox(SandboxName.sanitizedComponent(mailbox))
        defer { folder.close() }
        let name: SandboxName
        let budget = SandboxName.fileNameLimit - Self.reasonSuffix.utf8.count
        if let originalName {
            name = SandboxName(original: originalName, extensionChain: extensionChain, maximumBytes: budget)
        } else {
            name = sourceName.withPlatformBytes { bytes in
                SandboxName(originalBytes: bytes, extensionChain: extensionChain, maximumBytes: budget)
            }
        }
        var counter = 0
        var finalName = try freeName(name, in: folder, counter: &counter)
        var copied = false
        if folder.status.device == sourceStatus.device {
            do {
                try ensureUnchanged(sourceName, in: sourceDirectory, status: sourceStatus, path: sourcePath)
                while try !DeliveryError.performing("rename", folder.path(of: finalName).string, {
                    try sourceDirectory.renameNoReplace(sourceName, to: FilePath.Component(finalName)!, in: folder.descriptor)
                }) {
                    counter += 1
                    finalName = try freeName(name, in: folder, counter: &counter)
                }
            } catch let error as DeliveryError where error.errno == .improperLink {
                copied = true  // Same device number, different mount: copy instead.
            }
        } else {
            copied = true
        }
        if copied {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
            defer { buffer.deallocate() }
            var names = SandboxWriter.TemporaryNames()
            let temporary = try writer.copyToTemporary(
                from: source, expected: sourceStatus, describing: sourcePath.string,
                into: folder, owner: nil, buffer: buffer, names: &names, syncData: true)
            do {
                while try !writer.place(temporary.name, as: finalName, in: folder) {
                    counter += 1
                    finalName = try freeName(name, in: folder, counter: &counter)
                }
            } catch {
                writer.removeTemporary(temporary.name, in: folder)
                throw error
            }
        }
        let finalPath = folder.path(of: finalName)
        do {
            try writeReason(for: finalName, in: folder, reason: reason, contentType: contentType, origin: origin, date: date)
        } catch {
            // The file is safe in quarantine; only its explanation is missing.
            logger.error("quarantined a file but could not write its reason", metadata: ["file": "\(finalPath.string)", "error": "\(error)"])
        }
        try DeliveryError.performing("sync", folder.path.string) { try folder.descriptor.sync() }
        if copied {
            try ensureUnchanged(sourceName, in: sourceDirectory, status: sourceStatus, path: sourcePath)
            try DeliveryError.performing("remove", sourcePath.string) { try sourceDirectory.unlink(sourceName) }
        }
        try DeliveryError.performing("sync", sourcePath.removingLastComponent().string) { try sourceDirectory.sync() }
        // The intake logs the quarantine for the operator (once, with its MESSAGE_ID); this is detail.
        logger.debug("quarantined", metadata: [
            "source": "\(sourcePath.string)", "file": "\(finalPath.string)", "reason": "\(reason)",
            "contentType": "\(contentType ?? "unknown")",
        ])
        return finalPath
    }

    /// What is written to a reason file: the reason on one line, then `from PATH` (where the file
    /// was found, so `docroutectl quarantine release` knows the inbox to put it back in).
    package static func reasonLine(reason: String, contentType: String?, date: Date, origin: String? = nil) -> String {
        let oneLine = reason.split(whereSeparator: \.isNewline).joined(separator: " ")
        var text = "\(oneLine) (content type \(contentType ?? "unknown"), quarantined \(UTCTimestamp(date).rfc3339))\n"
        if let origin { text += "from \(origin.split(whereSeparator: \.isNewline).joined(separator: " "))\n" }
        return text
    }

    /// Removes leftover temporaries (from a crash during a copy) in the quarantine's folders.
    @discardableResult
    package func removeTemporaries() -> Int {
        guard let root = try? FileDescriptor.openDirectory(atPath: directory) else { return 0 }
        defer { root.closeIgnoringErrors() }
        var removed = 0
        // Best effort, as before: a folder that cannot be read keeps its temporaries until the next start.
        for mailboxName in (try? root.directoryNames()) ?? [] {
            guard let mailbox = try? root.open(mailboxName, .readOnly, options: [.directory]) else { continue }
            defer { mailbox.closeIgnoringErrors() }
            for name in (try? mailbox.directoryNames()) ?? [] where SandboxWriter.isTemporaryName(name.string) {
                if (try? mailbox.unlink(name)) == true { removed += 1 }
            }
        }
        return removed
    }

    private func openMailbox(_ mailbox: String) throws -> SandboxWriter.Folder {
        do {
            return try writer.openFolder(root: directory, components: [mailbox], owner: nil, create: true)
        } catch let error as DeliveryError where error.code == .vanished {
            do {
                try FileManager.default.createDirectory(atPath: directory.string, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
            } catch {
                throw DeliveryError(
                    code: .permissionDenied,
                    message: "Cannot create the quarantine directory \(directory.string): \(error). Create it and make it writable for docrouted.",
                    cause: error)
            }
            return try writer.openFolder(root: directory, components: [mailbox], owner: nil, create: true)
        }
    }

    /// The first candidate from `counter` on whose name and reason name are both free.
    private func freeName(_ name: SandboxName, in folder: SandboxWriter.Folder, counter: inout Int) throws -> String {
        while true {
            let (candidate, found) = try writer.firstFreeName(name, in: folder, from: counter)
            counter = found
            let reasonName = FilePath.Component(candidate + Self.reasonSuffix)!
            if try DeliveryError.performing("inspect", folder.path(of: reasonName.string).string, { try folder.descriptor.status(of: reasonName) }) == nil {
                return candidate
            }
            counter += 1
        }
    }

    private func ensureUnchanged(_ name: FilePath.Component, in directory: FileDescriptor, status: FileStatus, path: FilePath) throws {
        guard let found = try DeliveryError.performing("inspect", path.string, { try directory.status(of: name) }) else {
            throw DeliveryError(code: .vanished, message: "\(path.string) is gone. \(DeliveryError.advice(for: .vanished))")
        }
        guard found.isSameFile(as: status), found.size == status.size,
              found.modificationTimeNanoseconds == status.modificationTimeNanoseconds
        else {
            throw DeliveryError(code: .changed, message: "\(path.string) was replaced or changed since it was opened. \(DeliveryError.advice(for: .changed))")
        }
    }

    private func writeReason(for finalName: String, in folder: SandboxWriter.Folder, reason: String, contentType: String?, origin: String?, date: Date) throws {
        let line = Self.reasonLine(reason: reason, contentType: contentType, date: date, origin: origin)
        var names = SandboxWriter.TemporaryNames()
        let temporaryName = names.next()
        let temporaryComponent = FilePath.Component(temporaryName)!
        let temporaryPath = folder.path(of: temporaryName).string
        let descriptor = try DeliveryError.performing("open", temporaryPath) { try folder.descriptor.open(temporaryComponent, .writeOnly, options: [.create, .exclusiveCreate], permissions: 0o640) }
        do {
            defer { descriptor.closeIgnoringErrors() }
            var bytes = Array(line.utf8)
            try bytes.withUnsafeMutableBytes { buffer in try DeliveryError.performing("write", temporaryPath) { try descriptor.writeAll(from: UnsafeRawBufferPointer(buffer)) } }
            try DeliveryError.performing("sync data of", temporaryPath) { try descriptor.syncData() }
            // A reason left without its file by an earlier crash may be replaced.
            try DeliveryError.performing("rename", folder.path(of: finalName + Self.reasonSuffix).string) { try folder.descriptor.rename(temporaryComponent, to: FilePath.Component(finalName + Self.reasonSuffix)!, in: folder.descriptor) }
        } catch {
            _ = try? DeliveryError.performing("remove", temporaryPath) { try folder.descriptor.unlink(temporaryComponent) }
            throw error
        }
    }
}
