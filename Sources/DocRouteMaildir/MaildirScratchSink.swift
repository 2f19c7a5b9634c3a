import DocRouteMail
import DocRoutePlatform
import Logging
import SystemPackage

/// Writes each wanted attachment the parser decodes into its own temporary file of a scratch folder
/// (created `O_EXCL`, mode 0600, never following a link), straight from the parser's buffer; an
/// attached message is copied from the message file itself, byte for byte, as an `.eml`.
package final class MaildirScratchSink: AttachmentSink {
    let scratch: FileDescriptor
    let scratchPath: String
    /// The message being parsed (read with `pread`, never closed here), for attached messages' bytes.
    let message: FileDescriptor
    let messagePath: String
    let maximumSize: Int64
    let wanted: (MailAttachmentInfo) -> Bool
    let logger: Logger
    /// A random tag shared by this message's files, so two messages (or a leftover of a crash) never collide.
    let tag: String

    private(set) var attachments: [MaildirAttachment] = []
    private(set) var oversized: [MailAttachmentInfo] = []
    private var current: (descriptor: FileDescriptor, name: String)?
    private var currentSize: Int64 = 0
    private var currentOversized = false

    init(
        scratch: FileDescriptor, scratchPath: String, message: FileDescriptor, messagePath: String, maximumSize: Int64,
        wanted: @escaping (MailAttachmentInfo) -> Bool, logger: Logger
    ) {
        self.scratch = scratch
        self.scratchPath = scratchPath
        self.message = message
        self.messagePath = messagePath
        self.maximumSize = maximumSize
        self.wanted = wanted
        self.logger = logger
        var generator = SystemRandomNumberGenerator()
        tag = String(generator.next() as UInt64, radix: 16)
    }

    package func beginAttachment(_ info: MailAttachmentInfo) throws -> Bool {
        guard wanted(info) else { return false }
        currentSize = 0
        currentOversized = false
        current = try createTemporaryFile(partPath: info.partPath)
        return true
    }

    /// A new temporary file for part `partPath`.
    func createTemporaryFile(partPath: String) throws -> (descriptor: FileDescriptor, name: String) {
        // The tag makes a clash unlikely; a clash (a leftover) gets a fresh random suffix.
        var name = ".docroute-mail-\(tag)-\(partPath)"
        for attempt in 0..<8 {
            if attempt > 0 {
                var generator = SystemRandomNumberGenerator()
                name = ".docroute-mail-\(tag)-\(partPath)-\(String(generator.next() as UInt32, radix: 16))"
            }
            guard let component = FilePath.Component(name) else {
                throw DeliveryError(code: .invalidName, message: "\(name): no temporary file name can be made from MIME part \(partPath)")
            }
            do throws(Errno) {
                return (try scratch.open(component, .writeOnly, options: [.create, .exclusiveCreate], permissions: 0o600), name)
            } catch .fileExists {
                continue
            } catch {
                throw DeliveryError(errno: error, operation: "create temporary file", path: scratchPath + "/" + name)
            }
        }
        throw DeliveryError(code: .nameExhausted, message: "no free temporary name in \(scratchPath); remove stale .docroute-mail-* files there")
    }

    package func attachmentBytes(_ bytes: UnsafeRawBufferPointer) throws {
        guard let current else { return }
        if currentSize + Int64(bytes.count) > maximumSize {
            // Over the limit: stop writing and give the space back now rather than at the end.
            currentOversized = true
            self.current = nil
            current.descriptor.closeIgnoringErrors()
            scratch.removeIfPresent(current.name)
            return
        }
        try DeliveryError.performing("write", scratchPath + "/" + current.name) { try current.descriptor.writeAll(from: bytes) }
        currentSize += Int64(bytes.count)
    }

    package func endAttachment(_ info: MailAttachmentInfo, size: Int64, damage: AttachmentDamage) throws {
        if currentOversized {
            currentOversized = false
            oversized.append(info)
            logger.debug("attachment over the size limit skipped", metadata: [
                "part": "\(info.partPath)", "name": "\(info.fileName)", "limit": "\(maximumSize)",
            ])
            return
        }
        guard let finished = current else { return }
        current = nil
        finished.descriptor.closeIgnoringErrors()
        attachments.append(MaildirAttachment(
            temporaryName: finished.name, temporaryPath: scratchPath + "/" + finished.name,
            fileName: info.fileName, mimeType: info.mimeType, size: size, partPath: info.partPath,
            damage: damage, envelope: info.message, enclosingMessage: info.enclosingMessage,
            originalFilename: info.originalFileName ?? info.fileName, mimeTypeIsDefault: info.mimeTypeIsDefault
        ))
    }

    /// Copies an attached message's bytes from the message file into a temporary `.eml` file.
    package func attachedMessage(_ info: MailAttachmentInfo, bytes range: Range<Int64>, damage: AttachmentDamage) throws -> Bool {
        guard wanted(info) else { return false }
        guard Int64(range.count) <= maximumSize else {
            oversized.append(info)
            logger.debug("attached message over the size limit skipped", metadata: [
                "part": "\(info.partPath)", "name": "\(info.fileName)", "limit": "\(maximumSize)",
            ])
            return false
        }
        let file = try createTemporaryFile(partPath: info.partPath)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: MaildirAttachmentExtractor.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset = range.lowerBound
        do {
            while offset < range.upperBound {
                let wantedCount = Int(min(Int64(buffer.count), range.upperBound - offset))
                let count = try DeliveryError.performing("read", messagePath) { try message.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wantedCount]), atOffset: offset) }
                // The message shrank under us: what is there is what is delivered.
                if count == 0 { break }
                try DeliveryError.performing("write", scratchPath + "/" + file.name) { try file.descriptor.writeAll(from: UnsafeRawBufferPointer(rebasing: buffer[0..<count])) }
                offset += Int64(count)
            }
        } catch {
            file.descriptor.closeIgnoringErrors()
            scratch.removeIfPresent(file.name)
            throw error
        }
        file.descriptor.closeIgnoringErrors()
        let copied = offset - range.lowerBound
        attachments.append(MaildirAttachment(
            temporaryName: file.name, temporaryPath: scratchPath + "/" + file.name,
            fileName: info.fileName, mimeType: info.mimeType, size: copied, partPath: info.partPath,
            damage: damage, envelope: info.message, enclosingMessage: info.enclosingMessage,
            originalFilename: info.originalFileName ?? info.fileName, mimeTypeIsDefault: info.mimeTypeIsDefault
        ))
        return true
    }

    /// After a failure: closes the open file and removes every file this sink made.
    func discardAll() {
        if let current {
            current.descriptor.closeIgnoringErrors()
            scratch.removeIfPresent(current.name)
        }
        current = nil
        for attachment in attachments {
            scratch.removeIfPresent(attachment.temporaryName)
        }
        attachments = []
    }
}
