import DocRouteMail
import DocRouteTestSupport
import Foundation
import Testing

/// Messages written by hand (Fixtures/defects) with the defects real mail has, each held to what
/// Python's `email` package finds in it (`compose.py expect`): the same parts, with the same names,
/// types and bytes, or a recovery documented here. The damage each part gets is stated per file,
/// and checked against Python's own defects.
@Suite struct HandWrittenDefectTests {
    static let folder = Fixtures.mailFolder + "/defects"

    /// Where docroute deliberately differs from Python's `email`, and what it delivers instead.
    static let recoveries: [String: [String: [UInt8]]] = [
        // A quantum of one character: Python gives up and hands back the base64 text itself;
        // docroute keeps the bytes the whole quanta decode to, flagged truncated-encoding.
        "single-character-tail.eml": ["1": Array("Hello world!".utf8), "2": []],
        "nothing-recoverable.eml": ["1": []],
        // Python never decodes a message/rfc822 part's base64 (it parses the base64 text as a
        // message); a mail client decodes it, and so does docroute.
        "attached-message.eml": ["4": Array("From: Third <third@example.org>\r\nSubject: encoded\r\n\r\nbase64 message\r\n".utf8)],
    ]

    /// The damage of each part that has any; every other part must have none.
    static let damage: [String: [String: AttachmentDamage]] = [
        "missing-padding.eml": ["2": .badPadding, "3": .badPadding],
        "cut-short.eml": ["2": [.truncatedEncoding, .unterminated]],
        "unterminated.eml": ["3": .unterminated],
        "single-character-tail.eml": ["1": .truncatedEncoding, "2": .truncatedEncoding],
        "nothing-recoverable.eml": ["1": .truncatedEncoding],
    ]

    static let files = [
        "missing-padding.eml", "unterminated.eml", "cut-short.eml", "folded-headers.eml", "no-mime-version.eml",
        "outlook.eml", "lotus.eml", "name-only.eml", "mbox-from.eml", "attached-message.eml",
        "single-character-tail.eml", "nothing-recoverable.eml",
    ]

    @Test func everyFixtureIsTested() throws {
        let present = try FileManager.default.contentsOfDirectory(atPath: Self.folder).filter { $0.hasSuffix(".eml") }
        #expect(Set(present) == Set(Self.files))
    }

    @Test(arguments: files)
    func findsWhatPythonFinds(file: String) throws {
        let message = try readFile(Self.folder + "/" + file)
        try TemporaryFolder.with("mail") { temporary in
            let out = temporary.string
            try Fixtures.python("compose.py", ["expect", Self.folder + "/" + file, out])
            let expected = try Fixtures.Expectation.load(out)
            var first: [FoundPart]?
            for chunkSize in [1, 7, 76, 4096, 1 << 30] {
                let (summary, found) = try parts(message, chunkSize: chunkSize)
                #expect(!summary.isMalformed, "\(file): \(summary.problems)")
                #expect(summary.isMIME)
                // Python's compat32 keeps the folding of a header field; docroute unfolds it.
                #expect(summary.envelope.subject == Self.unfolded(expected.envelope.subject))
                #expect(summary.envelope.messageID == Self.unfolded(expected.envelope.messageID))
                #expect(found.map(\.info.partPath) == expected.attachments.map(\.partPath), "\(file), chunks of \(chunkSize)")
                if let first {
                    #expect(found.map(\.bytes) == first.map(\.bytes), "\(file): chunks of \(chunkSize) give other bytes")
                    continue
                }
                first = found
                for (part, wanted) in zip(found, expected.attachments) {
                    let label = "\(file) part \(wanted.partPath)"
                    // Python keeps a folded quoted name's line break; unfolding (RFC 5322 §2.2.3) removes it.
                    let unfolded = wanted.fileName?.replacingOccurrences(of: "\r\n", with: "").replacingOccurrences(of: "\n", with: "")
                    #expect(part.info.originalFileName == unfolded, "\(label)")
                    #expect(part.info.mimeType == wanted.mimeType, "\(label)")
                    var payload = try Self.recoveries[file]?[wanted.partPath] ?? expected.payload(wanted)
                    if file == "folded-headers.eml", wanted.partPath == "3" {
                        // "Content-Transfer-Encoding:" folded onto its next line: Python compares the
                        // raw folded value with "base64" and hands back the encoded text; unfolded
                        // (RFC 5322 §2.2.3), as mail clients read it, it is base64, and is decoded.
                        payload = Array(try #require(Data(base64Encoded: Data(try expected.payload(wanted)), options: .ignoreUnknownCharacters)))
                        #expect(payload.count == 90)
                    }
                    #expect(part.bytes == payload, "\(label): \(part.bytes.count) bytes, expected \(payload.count)")
                    #expect(part.damage == Self.damage[file]?[wanted.partPath] ?? [], "\(label): \(part.damage)")
                    // Python's decoding defects and docroute's encoding damage go together.
                    let pythonEncodingDefect = (wanted.defects ?? []).contains { $0 == "InvalidBase64PaddingDefect" || $0 == "InvalidBase64LengthDefect" }
                    #expect(pythonEncodingDefect == !part.damage.isDisjoint(with: [.badPadding, .truncatedEncoding]), "\(label): \(wanted.defects ?? [])")
                }
                // Python's missing closing boundary is docroute's unterminated part or multipart.
                let unclosed = (expected.defects ?? []).contains("CloseBoundaryNotFoundDefect")
                #expect(unclosed == summary.problems.contains { $0.code == .unterminatedMultipart }, "\(file)")
            }
        }
    }

    /// A header value as a reader shows it: line breaks of folding removed, outer white space trimmed.
    static func unfolded(_ value: String?) -> String? {
        value.map { $0.replacingOccurrences(of: "\r\n", with: "").replacingOccurrences(of: "\n", with: "").trimmingCharacters(in: .whitespaces) }
    }

    @Test func attachedMessagesAreEmlFilesWithTheExactBytesOfTheMessage() throws {
        let message = try readFile(Self.folder + "/attached-message.eml")
        let (summary, found) = try parts(message)
        #expect(found.map(\.info.fileName) == ["Original report.eml", "report.pdf", "Re: lunch?.eml", "message.eml"])
        #expect(found.map(\.info.mimeType) == ["message/rfc822", "application/pdf", "message/rfc822", "message/rfc822"])
        #expect(summary.attachments.map(\.isAttachedMessage) == [true, false, true, false])
        let text = String(decoding: found[0].bytes, as: UTF8.self)
        #expect(text.hasPrefix("From: Reporter <reporter@example.org>\n"))
        #expect(text.hasSuffix("--inner--\n"))
        #expect(String(decoding: found[2].bytes, as: UTF8.self) == "From: Someone <someone@example.org>\nSubject: Re: lunch?\nMessage-ID: <inner-lunch@example.org>\n\nYes, at noon.")
        // The attachment inside the forwarded message comes too, and knows its message.
        #expect(found[1].info.enclosingMessage?.subject == "Report")
        #expect(found[1].info.message.messageID == "<attached-message@example.org>")

        // Outlook attaches an item without a name: it is named after its subject.
        let (_, outlook) = try parts(try readFile(Self.folder + "/outlook.eml"))
        #expect(outlook.map(\.info.fileName) == ["image001.png", "Q1 figures.xlsx", "Original request.eml", "winmail.dat"])
    }

    @Test func attachedMessageEndedByTheEndOfInputIsUnterminated() throws {
        let message = Array(crlf("""
            From: s@example.org
            MIME-Version: 1.0
            Content-Type: multipart/mixed; boundary=b

            --b
            Content-Type: message/rfc822

            Subject: inner

            inner body
            """).utf8)
        let (_, found) = try parts(message)
        #expect(found.map(\.info.fileName) == ["inner.eml"])
        #expect(found.first?.damage == .unterminated)
        #expect(found.first?.bytes == Array("Subject: inner\r\n\r\ninner body".utf8))
    }

    @Test func messageNamesAlwaysEndInEml() {
        #expect(AttachmentFileName.forMessage(name: "Fwd: report", subject: "x") == "Fwd: report.eml")
        #expect(AttachmentFileName.forMessage(name: "saved.EML", subject: nil) == "saved.EML")
        #expect(AttachmentFileName.forMessage(name: nil, subject: "../../etc/passwd") == "_._etc_passwd.eml")
        #expect(AttachmentFileName.forMessage(name: nil, subject: "") == "message.eml")
        #expect(AttachmentFileName.forMessage(name: nil, subject: "\u{1}") == "message.eml")
        #expect(AttachmentFileName.forMessage(name: ".eml", subject: "s") == "eml.eml")
        #expect(AttachmentFileName.forMessage(name: "...", subject: "Hello") == "Hello.eml")
        let long = AttachmentFileName.forMessage(name: String(repeating: "é", count: 300), subject: nil)
        #expect(long.hasSuffix(".eml") && long.utf8.count <= 255)
    }

    @Test func damageWordsAreThoseOfTheProtocol() {
        #expect(AttachmentDamage([.unterminated, .truncatedEncoding]).words == ["truncated-encoding", "unterminated"])
        #expect(AttachmentDamage.badPadding.words == ["bad-padding"])
        #expect(AttachmentDamage.invalidCharacters.words == ["invalid-characters"])
        #expect(AttachmentDamage().words.isEmpty)
    }
}
