import DocRoutePlatform
import Foundation
import Logging
import NIOPosix
import SystemPackage

/// Reads Maildir messages into the scratch folder, one attachment per temporary file, on a thread
/// of its own: parsing a 200 MiB message must never hold up the intake actor or an event loop.
///
/// The scratch folder lives under `state_directory` (`mail-scratch/`, mode 0700, on the ledger's
/// file system so a copy never crosses devices twice). Whatever is in it at start is a crash's
/// leftover and is removed: the ledger, not the scratch folder, knows what was delivered.
package final class MaildirMessageReader: Sendable {
    package let scratchPath: String
    /// The scratch folder, open for the reader's whole life and for as long as deliveries of
    /// attachments in it are under way.
    package let scratchFolder: DirectoryHandle
    /// ``scratchFolder``'s descriptor number.
    package var scratchNumber: Int32 { scratchFolder.descriptor.rawValue }
    let maximumAttachmentSize: Int64
    let pool: NIOThreadPool
    let logger: Logger

    package var scratch: FileDescriptor { FileDescriptor(rawValue: scratchNumber) }

    package init(stateDirectory: String, maximumAttachmentSize: Int64, logger: Logger) throws {
        let path = stateDirectory + "/mail-scratch"
        try DeliveryError.performing("create the mail scratch folder", path) { try FilePath(path).makeDirectory(permissions: 0o700) }
        let fd = try DeliveryError.performing("open the mail scratch folder", path) {
            try FileDescriptor.openDirectory(atPath: FilePath(path))
        }
        scratchPath = path
        scratchFolder = DirectoryHandle(adopting: fd)
        self.maximumAttachmentSize = maximumAttachmentSize
        self.logger = logger
        pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        removeLeftovers()
    }

    deinit {
        pool.shutdownGracefully { _ in }
    }

    /// Removes the temporary files a crash left behind.
    func removeLeftovers() {
        var removed = 0
        let entries: [DirectoryEntry]
        do {
            entries = try scratch.directoryEntries()
        } catch {
            // Only leftovers go unremoved: scratch files have unique names, so none is in the way.
            logger.warning("mail scratch folder cannot be listed; files an interrupted run left there stay: \(error)", metadata: ["path": "\(scratchPath)"])
            return
        }
        for entry in entries where !entry.isDirectory && entry.name.string.hasPrefix(".docroute-mail-") {
            if (try? scratch.unlink(entry.name)) == true { removed += 1 }
        }
        if removed > 0 { logger.info("removed mail scratch files left by an interrupted run", metadata: ["count": "\(removed)", "path": "\(scratchPath)"]) }
    }

    /// Streams the message open as `message` (the caller's descriptor, left open) into temporary
    /// files, off the caller's thread.
    package func read(message: Int32, path: String) async throws -> MaildirExtraction {
        let extractor = MaildirAttachmentExtractor(
            scratch: scratch, scratchPath: scratchPath, maximumAttachmentSize: maximumAttachmentSize, logger: logger)
        return try await pool.runIfActive {
            try extractor.extract(message: FileDescriptor(rawValue: message), messagePath: path)
        }
    }

    /// Removes one temporary file (an attachment not delivered); a file already gone is fine.
    package func discard(_ temporaryName: String) {
        scratch.removeIfPresent(temporaryName)
    }
}
