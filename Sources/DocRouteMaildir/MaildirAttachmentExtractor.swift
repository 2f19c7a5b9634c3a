import DocRouteMail
import DocRoutePlatform
import Logging
import SystemPackage

/// Streams a Maildir message through ``MailParser`` into one temporary file per attachment, in
/// bounded memory: 64 KiB read at a time, the parser's own fixed buffers, no attachment held whole.
///
/// ```swift
/// let extractor = MaildirAttachmentExtractor(scratch: scratchFD, scratchPath: "/var/lib/docroute/mail-scratch",
///                                            maximumAttachmentSize: configuration.maxFileSize, logger: logger)
/// let extraction = try extractor.extract(message: FileDescriptor(rawValue: file.descriptor), messagePath: path) { info in
///     !ledger.hasDelivered(messageID: info.message.messageID ?? unique, partPath: info.partPath)
/// }
/// ```
package struct MaildirAttachmentExtractor: Sendable {
    /// The folder for the temporary files, open (the caller's descriptor). Not a watched inbox: its
    /// files would be taken as arrivals (they are hidden `.docroute-mail-*` names all the same).
    package var scratch: FileDescriptor
    /// Its path, for messages and ``MaildirAttachment/temporaryPath``.
    package var scratchPath: String
    /// Attachments with more decoded bytes are not kept (``MaildirExtraction/oversized``).
    package var maximumAttachmentSize: Int64
    /// The parser's bounds.
    package var limits: MailParser.Limits
    package var logger: Logger

    /// The read size.
    static let chunkSize = 64 * 1024

    /// Creates an extractor writing into `scratch`.
    package init(scratch: FileDescriptor, scratchPath: String, maximumAttachmentSize: Int64 = .max, limits: MailParser.Limits = .init(), logger: Logger) {
        self.scratch = scratch
        self.scratchPath = scratchPath
        self.maximumAttachmentSize = maximumAttachmentSize
        self.limits = limits
        self.logger = logger
    }

    /// Reads the message open as `message` from its first byte (with `pread`: the descriptor's
    /// offset is not used, nor is the descriptor closed) and writes each attachment that `wanted`
    /// accepts to a new temporary file.
    ///
    /// A malformed message is not an error: see ``MaildirExtraction/summary``. Only input/output
    /// fails the call; its temporary files are then removed.
    ///
    /// - Parameter wanted: called once per attachment before its bytes; false skips it without
    ///   decoding (an attachment the ledger already has, after a crash).
    /// - Throws: ``DeliveryError``: the message cannot be read, or the scratch folder cannot be
    ///   written (`no-space` is retryable).
    package func extract(
        message: FileDescriptor,
        messagePath: String,
        wanted: @escaping (MailAttachmentInfo) -> Bool = { _ in true }
    ) throws -> MaildirExtraction {
        let sink = MaildirScratchSink(
            scratch: scratch, scratchPath: scratchPath, message: message, messagePath: messagePath,
            maximumSize: maximumAttachmentSize, wanted: wanted, logger: logger)
        var parser = MailParser(sink: sink, limits: limits)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        let summary: MailSummary
        do {
            var offset: Int64 = 0
            while true {
                let count = try DeliveryError.performing("read", messagePath) { try message.read(into: buffer, atOffset: offset) }
                if count == 0 { break }
                offset += Int64(count)
                try parser.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            }
            summary = try parser.finish()
        } catch {
            sink.discardAll()
            throw error
        }
        for problem in summary.problems {
            logger.debug("mail problem: \(problem)", metadata: ["path": "\(messagePath)"])
        }
        // An attached message is complete only after the attachments inside it: put it back in
        // message order, before them, as the summary lists the parts.
        let order = Dictionary(summary.attachments.enumerated().map { ($1.info.partPath, $0) }, uniquingKeysWith: { first, _ in first })
        let attachments = sink.attachments.enumerated().sorted {
            (order[$0.element.partPath] ?? Int.max, $0.offset) < (order[$1.element.partPath] ?? Int.max, $1.offset)
        }.map(\.element)
        return MaildirExtraction(summary: summary, attachments: attachments, oversized: sink.oversized)
    }
}
