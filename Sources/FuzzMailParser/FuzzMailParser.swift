import DocRouteMail
import FuzzSupport

/// Keeps a digest of each attachment instead of its bytes, and checks the sink contract.
final class DigestSink: AttachmentSink {
    struct Attachment: Hashable {
        var info: MailAttachmentInfo
        var digest: UInt64 = 0xcbf2_9ce4_8422_2325
        var written: Int64 = 0
        var size: Int64 = -1
        var damage: AttachmentDamage = []
    }

    var attachments: [Attachment] = []
    var open = false
    /// The input's length: an attached message's bytes must lie inside it.
    var inputLength: Int64 = 0

    func beginAttachment(_ info: MailAttachmentInfo) throws -> Bool {
        precondition(!open, "an attachment began inside another")
        open = true
        attachments.append(Attachment(info: info))
        return true
    }

    func attachmentBytes(_ bytes: UnsafeRawBufferPointer) throws {
        precondition(open, "attachment bytes outside an attachment")
        var digest = attachments[attachments.count - 1].digest
        for byte in bytes {
            digest = (digest ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        attachments[attachments.count - 1].digest = digest
        attachments[attachments.count - 1].written += Int64(bytes.count)
    }

    func endAttachment(_ info: MailAttachmentInfo, size: Int64, damage: AttachmentDamage) throws {
        precondition(open, "an attachment ended that never began")
        precondition(info == attachments[attachments.count - 1].info, "an attachment ended with other info than it began")
        precondition(size == attachments[attachments.count - 1].written, "an attachment's size is not the bytes written")
        open = false
        attachments[attachments.count - 1].size = size
        attachments[attachments.count - 1].damage = damage
    }

    func attachedMessage(_ info: MailAttachmentInfo, bytes range: Range<Int64>, damage: AttachmentDamage) throws -> Bool {
        precondition(!open, "an attached message ended inside an attachment")
        precondition(range.lowerBound >= 0 && range.upperBound <= inputLength, "an attached message's bytes lie outside the input")
        precondition(info.fileName.lowercased().hasSuffix(".eml"), "an attached message's name does not end in .eml")
        return true
    }
}

/// Parses `bytes` fed in chunks whose sizes cycle through `sizes`.
func parse(_ bytes: UnsafeRawBufferPointer, chunkSizes sizes: [Int]) -> (MailSummary, [DigestSink.Attachment]) {
    let sink = DigestSink()
    sink.inputLength = Int64(bytes.count)
    var parser = MailParser(sink: sink, limits: .init(maximumHeaderBytes: 4096, maximumDepth: 8, maximumParts: 64))
    var offset = 0
    var turn = 0
    do {
        while offset < bytes.count {
            let end = min(bytes.count, offset + sizes[turn % sizes.count])
            try parser.feed(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
            offset = end
            turn += 1
        }
        let summary = try parser.finish()
        precondition(!sink.open, "an attachment was left open after finish")
        return (summary, sink.attachments)
    } catch {
        preconditionFailure("a sink that never throws made the parser throw: \(error)")
    }
}

/// libFuzzer entry point: any bytes as a mail. The parser must never trap, and what it finds must
/// not depend on how the input was cut into chunks.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMailParser(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(start), count: start == nil ? 0 : count)
    let whole = parse(bytes, chunkSizes: [max(1, bytes.count)])
    let pieces = parse(bytes, chunkSizes: [1, 7, 2, 64, 3, 513])
    precondition(whole.0 == pieces.0, "the summary depends on chunking:\n\(whole.0)\n\(pieces.0)")
    precondition(whole.1 == pieces.1, "the attachments depend on chunking")
    return 0
}

/// The program's entry point (see ``runFuzzer(argc:argv:testOneInput:)``).
@_cdecl("FuzzMailParser_main")
public func fuzzMailParserMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runFuzzer(argc: argc, argv: argv, testOneInput: fuzzMailParser)
}
