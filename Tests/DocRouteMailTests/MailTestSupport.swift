import DocRouteMail
import DocRouteTestSupport
import Foundation
import Testing

/// An attachment as a test sees it: what began, every byte, how it ended.
struct CollectedAttachment {
    var info: MailAttachmentInfo
    var bytes: [UInt8] = []
    var size: Int64 = -1
    var damage: AttachmentDamage = []
    var ended = false
}

/// Keeps every attachment's bytes in memory (test messages are small), checking the sink contract.
final class CollectingSink: AttachmentSink {
    var attachments: [CollectedAttachment] = []
    var skipping: (MailAttachmentInfo) -> Bool = { _ in false }
    var inAttachment = false
    var largestWrite = 0

    func beginAttachment(_ info: MailAttachmentInfo) throws -> Bool {
        #expect(!inAttachment, "an attachment began inside another")
        if skipping(info) { return false }
        inAttachment = true
        attachments.append(CollectedAttachment(info: info))
        return true
    }

    func attachmentBytes(_ bytes: UnsafeRawBufferPointer) throws {
        #expect(inAttachment, "bytes outside an attachment")
        largestWrite = max(largestWrite, bytes.count)
        attachments[attachments.count - 1].bytes += bytes
    }

    func endAttachment(_ info: MailAttachmentInfo, size: Int64, damage: AttachmentDamage) throws {
        #expect(inAttachment)
        #expect(info == attachments.last?.info)
        inAttachment = false
        attachments[attachments.count - 1].size = size
        attachments[attachments.count - 1].damage = damage
        attachments[attachments.count - 1].ended = true
    }

    /// Attached messages, as the parser located them.
    var messages: [(info: MailAttachmentInfo, range: Range<Int64>, damage: AttachmentDamage)] = []

    func attachedMessage(_ info: MailAttachmentInfo, bytes range: Range<Int64>, damage: AttachmentDamage) throws -> Bool {
        #expect(!inAttachment, "an attached message ended inside an attachment")
        messages.append((info, range, damage))
        return !skipping(info)
    }
}

/// Every part a reader gets from a message, decoded leaves and attached messages alike, in the order
/// the summary lists them.
struct FoundPart {
    var info: MailAttachmentInfo
    var bytes: [UInt8]
    var damage: AttachmentDamage
}

/// Parses `message` in chunks of `chunkSize` and returns every part, attached messages cut from the
/// message at the range the parser gave.
func parts(_ message: [UInt8], chunkSize: Int = 4096) throws -> (MailSummary, [FoundPart]) {
    let sink = CollectingSink()
    let (summary, leaves) = try parse(message, chunkSize: chunkSize, sink: sink)
    var found: [String: FoundPart] = [:]
    for leaf in leaves { found[leaf.info.partPath] = FoundPart(info: leaf.info, bytes: leaf.bytes, damage: leaf.damage) }
    for attached in sink.messages {
        #expect(attached.range.upperBound <= Int64(message.count))
        found[attached.info.partPath] = FoundPart(
            info: attached.info, bytes: Array(message[Int(attached.range.lowerBound)..<Int(attached.range.upperBound)]), damage: attached.damage)
    }
    let ordered = summary.attachments.compactMap { found[$0.info.partPath] }
    #expect(ordered.count == found.count, "every part reported to the sink is in the summary")
    return (summary, ordered)
}

/// Parses `message` fed in chunks of `chunkSize` bytes.
func parse(_ message: [UInt8], chunkSize: Int = 4096, limits: MailParser.Limits = .init(), sink: CollectingSink = CollectingSink()) throws -> (MailSummary, [CollectedAttachment]) {
    var parser = MailParser(sink: sink, limits: limits)
    var offset = 0
    while offset < message.count {
        let end = min(message.count, offset + max(1, chunkSize))
        try parser.feed(message[offset..<end])
        offset = end
    }
    let summary = try parser.finish()
    for attachment in sink.attachments {
        #expect(attachment.ended, "attachment \(attachment.info.partPath) never ended")
        #expect(attachment.size == Int64(attachment.bytes.count))
    }
    return (summary, sink.attachments)
}

func parse(_ text: String, chunkSize: Int = 4096, limits: MailParser.Limits = .init()) throws -> (MailSummary, [CollectedAttachment]) {
    try parse(Array(text.utf8), chunkSize: chunkSize, limits: limits)
}

/// Text with its line breaks made CRLF, as mail on the wire has them.
func crlf(_ text: String) -> String {
    text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n")
}

extension Fixtures {
    /// What compose.py says a reader must find in a message.
    struct Expectation: Decodable {
        struct Envelope: Decodable {
            var from: String?
            var subject: String?
            var messageID: String?
            var date: String?
        }

        struct Attachment: Decodable {
            var partPath: String
            var fileName: String?
            var mimeType: String
            var file: String
            /// Python's defects on the part, its decoding's included (`InvalidBase64PaddingDefect`).
            var defects: [String]?
            /// A message/rfc822 part: its bytes are the message as Python writes it back.
            var attachedMessage: Bool?
            /// For an attached message, its own subject.
            var subject: String?

            /// The safe name a reader gives this part: an attached message's always ends in `.eml`.
            var expectedFileName: String {
                attachedMessage == true
                    ? AttachmentFileName.forMessage(name: fileName, subject: subject)
                    : AttachmentFileName.sanitize(fileName ?? "")
            }
        }

        var envelope: Envelope
        var attachments: [Attachment]
        /// Every defect Python found, anywhere in the message.
        var defects: [String]?

        static func load(_ folder: String) throws -> Expectation {
            let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/expected.json"))
            return try JSONDecoder().decode(Expectation.self, from: data)
        }

        func payload(_ attachment: Attachment) throws -> [UInt8] {
            Array(try Data(contentsOf: URL(fileURLWithPath: attachment.file)))
        }
    }
}

func readFile(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}
