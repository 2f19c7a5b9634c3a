import DocRouteMail
import DocRouteTestSupport
import Foundation
import Testing

/// Messages written by Python's standard `email` package, read back by Python to say what must be
/// found: every attachment's bytes, name, type and part path, and the decoded envelope.
@Suite struct ComposedMailTests {
    static let chunkSizes = [1, 7, 76, 4096, 1 << 30]

    @Test(arguments: ["rich", "legacy"], chunkSizes)
    func everyAttachmentArrivesByteForByte(scenario: String, chunkSize: Int) throws {
        try TemporaryFolder.with("mail") { temporary in
            let folder = temporary.string
            try Fixtures.python("compose.py", ["message", scenario, folder])
            let expected = try Fixtures.Expectation.load(folder)
            let message = try readFile(folder + "/message.eml")
            let (summary, attachments) = try parts(message, chunkSize: chunkSize)

            #expect(summary.problems.isEmpty, "\(summary.problems)")
            #expect(!summary.isMalformed)
            #expect(summary.isMIME)
            #expect(summary.byteCount == Int64(message.count))
            #expect(summary.envelope.from == expected.envelope.from)
            #expect(summary.envelope.subject == expected.envelope.subject)
            #expect(summary.envelope.messageID == expected.envelope.messageID)
            #expect(summary.envelope.date == expected.envelope.date)

            #expect(attachments.map(\.info.partPath) == expected.attachments.map(\.partPath))
            for (found, wanted) in zip(attachments, expected.attachments) {
                #expect(found.info.originalFileName == wanted.fileName, "part \(wanted.partPath)")
                #expect(found.info.fileName == wanted.expectedFileName)
                #expect(found.info.mimeType == wanted.mimeType, "part \(wanted.partPath)")
                #expect(found.damage.isEmpty, "part \(wanted.partPath): \(found.damage)")
                let payload = try expected.payload(wanted)
                #expect(found.bytes.count == payload.count, "part \(wanted.partPath)")
                #expect(found.bytes == payload, "part \(wanted.partPath) differs")
                #expect(found.info.message.messageID == expected.envelope.messageID)
            }
        }
    }

    @Test func richMessageHasWhatItWasComposedWith() throws {
        try TemporaryFolder.with("mail") { temporary in
            let folder = temporary.string
            try Fixtures.python("compose.py", ["message", "rich", folder])
            let (summary, attachments) = try parse(try readFile(folder + "/message.eml"))
            #expect(summary.envelope.subject == "Rapport été – 2025 ✓ avec pièces jointes")
            #expect(summary.envelope.from == "Zoë Ünïcode <zoe@example.org>")
            let names = attachments.map(\.info.fileName)
            #expect(names == [
                "Übersicht März 2025.pdf",
                String(repeating: "très-long-nom-de-fichier-", count: 5) + "Ω.txt",
                "photo.jpg", "photo.jpg", "logo.png", "diagramme réseau.png", "données.csv",
            ])
            // Duplicate names are both reported, told apart by their part paths.
            let photos = attachments.filter { $0.info.fileName == "photo.jpg" }
            #expect(photos.map(\.info.partPath) == ["4", "5"])
            #expect(photos[0].bytes != photos[1].bytes)
            #expect(attachments[4].info.disposition == .inline)
            #expect(attachments[1].info.transferEncoding == "quoted-printable")
            // The forwarded message's attachments count, and know which message held them.
            let forwarded = attachments.filter { $0.info.partPath.hasPrefix("7.") }
            #expect(forwarded.count == 2)
            #expect(forwarded.allSatisfy { $0.info.enclosingMessage?.subject == "Schéma du réseau" })
            #expect(forwarded.allSatisfy { $0.info.enclosingMessage?.from == "Åsa Nilsson <asa@example.se>" })
            #expect(forwarded.allSatisfy { $0.info.message.messageID == "<rich-1@example.org>" })
            #expect(attachments[0].info.enclosingMessage == nil)
            #expect(String(decoding: forwarded[1].bytes, as: UTF8.self) == "nom;valeur\nété;1\n")
        }
    }

    @Test func legacyMessageDecodesItsCharsets() throws {
        try TemporaryFolder.with("mail") { temporary in
            let folder = temporary.string
            try Fixtures.python("compose.py", ["message", "legacy", folder])
            let (summary, attachments) = try parse(try readFile(folder + "/message.eml"))
            #expect(summary.envelope.subject == "Отчёт за март")
            #expect(attachments.map(\.info.fileName) == ["café.txt", "Tabulka č. 1.xls", "data.bin"])
            #expect(attachments[2].info.disposition == .unspecified)
            #expect(attachments[0].bytes == Array("café crème\n".data(using: .isoLatin1)!))
        }
    }

    @Test func skippedAttachmentsAreListedButNotDecoded() throws {
        try TemporaryFolder.with("mail") { temporary in
            let folder = temporary.string
            try Fixtures.python("compose.py", ["message", "rich", folder])
            let sink = CollectingSink()
            sink.skipping = { $0.partPath == "2" || $0.partPath == "7.2" }
            let (summary, attachments) = try parse(try readFile(folder + "/message.eml"), sink: sink)
            #expect(attachments.map(\.info.partPath) == ["3", "4", "5", "6", "7.3"])
            // Seven attachments and the forwarded message itself (part 7, an .eml).
            #expect(summary.attachments.count == 8)
            #expect(summary.attachments.filter(\.isAttachedMessage).map(\.info.partPath) == ["7"])
            #expect(summary.attachments.filter { !$0.wanted }.map(\.info.partPath) == ["2", "7.2"])
            #expect(summary.attachments.first { $0.info.partPath == "3" }?.size == Int64(attachments[0].bytes.count))
        }
    }

    @Test func sinkSeesBoundedWrites() throws {
        try TemporaryFolder.with("mail") { temporary in
            let folder = temporary.string
            try Fixtures.python("compose.py", ["message", "rich", folder])
            let sink = CollectingSink()
            _ = try parse(try readFile(folder + "/message.eml"), chunkSize: 1 << 30, sink: sink)
            // The whole message was one chunk, yet no write exceeds the parser's output buffer.
            #expect(sink.largestWrite > 0)
            #expect(sink.largestWrite <= 128 * 1024 + 64)
        }
    }
}
