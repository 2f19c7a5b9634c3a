import DocRouteMail
import Foundation
import Testing

/// Hostile and broken input: every case must parse without crashing, in bounded time and memory,
/// and report what was wrong.
@Suite struct BadInputTests {
    static let head = crlf("""
        From: Sender <s@example.org>
        Subject: test
        Message-ID: <bad@example.org>
        MIME-Version: 1.0

        """)

    /// A multipart/mixed message with boundary `b` around `parts` (each a part's header and body).
    static func multipart(_ parts: [String], close: Bool = true) -> String {
        var text = head.replacingOccurrences(of: "MIME-Version: 1.0\r\n", with: "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n")
        text += "\r\npreamble\r\n"
        for part in parts { text += "--b\r\n" + crlf(part) + "\r\n" }
        if close { text += "--b--\r\n" }
        return text
    }

    /// Parses with several chunk sizes and checks they agree; returns the one-byte-chunk result.
    func parseEverySplit(_ message: [UInt8], limits: MailParser.Limits = .init()) throws -> (MailSummary, [CollectedAttachment]) {
        let (summary, attachments) = try parse(message, chunkSize: 1, limits: limits)
        for size in [2, 3, 5, 64, 1 << 30] {
            let (other, otherAttachments) = try parse(message, chunkSize: size, limits: limits)
            #expect(other == summary, "chunk size \(size) gives another summary")
            #expect(otherAttachments.map(\.bytes) == attachments.map(\.bytes), "chunk size \(size) gives other bytes")
        }
        return (summary, attachments)
    }

    func parseEverySplit(_ text: String, limits: MailParser.Limits = .init()) throws -> (MailSummary, [CollectedAttachment]) {
        try parseEverySplit(Array(text.utf8), limits: limits)
    }

    @Test func truncatedBase64IsReportedDamaged() throws {
        // "SGVsbG8gd29y" is "Hello wor"; one more character is a quantum cut short.
        let message = Self.multipart(["""
            Content-Type: application/pdf
            Content-Transfer-Encoding: base64
            Content-Disposition: attachment; filename="cut.pdf"

            SGVsbG8gd29y
            b
            """])
        let (summary, attachments) = try parseEverySplit(message)
        #expect(attachments.count == 1)
        #expect(attachments[0].damage == .truncatedEncoding)
        #expect(attachments[0].damage.isContentIncomplete)
        #expect(attachments[0].bytes == Array("Hello wor".utf8))
        #expect(summary.problems.map(\.code) == [.truncatedEncoding])
        #expect(summary.problems[0].partPath == "1")
        #expect(summary.attachments[0].damage == .truncatedEncoding)
        #expect(!summary.isMalformed)
    }

    @Test func messageCutInsideBase64IsTruncatedAndUnterminated() throws {
        var message = Self.multipart(["""
            Content-Type: application/octet-stream
            Content-Transfer-Encoding: base64
            Content-Disposition: attachment; filename="data.bin"

            AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4
            OTo7PD0+P0BBQk
            """], close: false)
        // The input stops right after "Qk": two characters of a quantum, one whole byte (66).
        message = String(decoding: Array(message.utf8).dropLast(2), as: UTF8.self)
        #expect(message.hasSuffix("P0BBQk"))
        let (summary, attachments) = try parseEverySplit(message)
        #expect(attachments.count == 1)
        #expect(attachments[0].damage == [.truncatedEncoding, .unterminated])
        #expect(attachments[0].bytes == Array(0...66).map(UInt8.init))
        #expect(Set(summary.problems.map(\.code)) == [.truncatedEncoding, .unterminatedMultipart])
    }

    @Test func missingClosingBoundaryEndsLastPartAtEndOfInput() throws {
        let message = Self.multipart([
            "Content-Disposition: attachment; filename=\"first.txt\"\n\nfirst",
            "Content-Disposition: attachment; filename=\"last.txt\"\n\nline one\nline two\n",
        ], close: false)
        let (summary, attachments) = try parseEverySplit(message)
        #expect(attachments.map(\.info.fileName) == ["first.txt", "last.txt"])
        #expect(attachments[0].bytes == Array("first".utf8))
        #expect(attachments[0].damage.isEmpty)
        #expect(attachments[1].bytes == Array("line one\r\nline two\r\n".utf8))
        #expect(attachments[1].damage == .unterminated)
        #expect(!attachments[1].damage.isContentIncomplete)
        #expect(summary.problems.map(\.code) == [.unterminatedMultipart])
        #expect(summary.problems[0].partPath == "")
    }

    @Test func boundaryThatNeverAppearsGivesNoAttachments() throws {
        let message = Self.head.replacingOccurrences(of: "MIME-Version: 1.0\r\n", with: "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=never\r\n")
            + crlf("\n--other\nContent-Disposition: attachment; filename=x.txt\n\nnot a part\n")
        let (summary, attachments) = try parseEverySplit(message)
        #expect(attachments.isEmpty)
        #expect(summary.problems.map(\.code) == [.unterminatedMultipart])
        #expect(!summary.isMalformed)
    }

    @Test func innerMultipartWithoutCloseIsEndedByOuterBoundary() throws {
        let message = Self.multipart([
            "Content-Type: multipart/mixed; boundary=inner\n\n--inner\nContent-Disposition: attachment; filename=in.txt\n\ninside",
            "Content-Disposition: attachment; filename=after.txt\n\nafter",
        ])
        let (summary, attachments) = try parseEverySplit(message)
        #expect(attachments.map(\.info.partPath) == ["1.1", "2"])
        #expect(attachments[0].bytes == Array("inside".utf8))
        #expect(attachments[0].damage == .unterminated)
        #expect(attachments[1].bytes == Array("after".utf8))
        #expect(attachments[1].damage.isEmpty)
        #expect(summary.problems.map(\.code) == [.unterminatedMultipart])
        #expect(summary.problems[0].partPath == "1")
    }

    @Test func nestingAThousandMultipartsDeepIsBounded() throws {
        var text = Self.head.replacingOccurrences(of: "MIME-Version: 1.0\r\n", with: "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b0\"\r\n") + "\r\n"
        for level in 0..<1000 {
            text += "--b\(level)\r\nContent-Type: multipart/mixed; boundary=\"b\(level + 1)\"\r\n\r\n"
        }
        text += "--b1000\r\nContent-Disposition: attachment; filename=deep.txt\r\n\r\ndeep\r\n"
        for level in (1...1000).reversed() { text += "--b\(level)--\r\n" }
        text += "--b0\r\nContent-Disposition: attachment; filename=after.txt\r\n\r\nafter\r\n--b0--\r\n"
        let (summary, attachments) = try parse(text, chunkSize: 1000)
        #expect(attachments.map(\.info.fileName) == ["after.txt"])
        #expect(attachments[0].info.partPath == "2")
        #expect(attachments[0].bytes == Array("after".utf8))
        #expect(summary.problems.contains { $0.code == .tooDeep })
        #expect(!summary.isMalformed)
    }

    @Test func nestingAThousandForwardedMessagesDeepIsBounded() throws {
        var text = Self.head.replacingOccurrences(of: "MIME-Version: 1.0\r\n", with: "MIME-Version: 1.0\r\nContent-Type: message/rfc822\r\n") + "\r\n"
        for _ in 0..<1000 { text += "Subject: again\r\nContent-Type: message/rfc822\r\n\r\n" }
        text += "Content-Type: text/plain\r\nContent-Disposition: attachment; filename=deep.txt\r\n\r\ndeep\r\n"
        let (summary, attachments) = try parse(text, chunkSize: 333)
        #expect(attachments.isEmpty)
        #expect(summary.problems.map(\.code) == [.tooDeep])
    }

    @Test func depthLimitIsExact() throws {
        func nested(_ levels: Int) -> String {
            var text = Self.head.replacingOccurrences(of: "MIME-Version: 1.0\r\n", with: "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b0\"\r\n") + "\r\n"
            for level in 0..<levels { text += "--b\(level)\r\nContent-Type: multipart/mixed; boundary=\"b\(level + 1)\"\r\n\r\n" }
            text += "--b\(levels)\r\nContent-Disposition: attachment; filename=x.txt\r\n\r\nx\r\n"
            for level in (0...levels).reversed() { text += "--b\(level)--\r\n" }
            return text
        }
        let limits = MailParser.Limits(maximumDepth: 3)
        let (_, found) = try parse(nested(2), limits: limits)
        #expect(found.map(\.info.partPath) == ["1.1.1"])
        let (summary, skipped) = try parse(nested(3), limits: limits)
        #expect(skipped.isEmpty)
        #expect(summary.problems.first?.code == .tooDeep)
        #expect(summary.problems.first?.partPath == "1.1.1.1")
    }

    @Test func oneMebibyteMessageHeaderMakesTheMessageMalformed() throws {
        let big = "X-Filler: " + String(repeating: "a", count: 1 << 20) + "\r\n"
        let message = "From: s@example.org\r\n" + big + crlf("""
            MIME-Version: 1.0
            Content-Type: multipart/mixed; boundary=b

            --b
            Content-Disposition: attachment; filename=x.txt

            x
            --b--
            """)
        let (summary, attachments) = try parse(message, chunkSize: 65536)
        #expect(attachments.isEmpty)
        #expect(summary.isMalformed)
        #expect(summary.problems.map(\.code) == [.headerTooLarge])
        #expect(summary.problems[0].partPath == "")

        // Folded over many lines, it is just as large.
        let folded = "From: s@example.org\r\nX-Filler: start\r\n" + String(repeating: " folded line of text\r\n", count: 50_000) + "\r\nbody\r\n"
        let (foldedSummary, _) = try parse(folded, chunkSize: 4096)
        #expect(foldedSummary.isMalformed)
    }

    @Test func oneMebibytePartHeaderSkipsOnlyThatPart() throws {
        let message = Self.multipart([
            "X-Filler: " + String(repeating: "a", count: 1 << 20) + "\nContent-Disposition: attachment; filename=big.txt\n\nbig",
            "Content-Disposition: attachment; filename=fine.txt\n\nfine",
        ])
        let (summary, attachments) = try parse(message, chunkSize: 8192)
        #expect(attachments.map(\.info.fileName) == ["fine.txt"])
        #expect(attachments[0].bytes == Array("fine".utf8))
        #expect(summary.problems.map(\.code) == [.headerTooLarge])
        #expect(summary.problems[0].partPath == "1")
        #expect(!summary.isMalformed)
    }

    @Test func dangerousFileNamesAreSanitised() throws {
        let names: [(encoded: String, expected: String)] = [
            ("filename=\"../../etc/passwd\"", "_._etc_passwd"),
            ("filename=\"/etc/shadow\"", "_etc_shadow"),
            ("filename*=UTF-8''evil%00name.txt", "evilname.txt"),
            ("filename*=UTF-8''tab%09and%0Anewline%1B.txt", "tabandnewline.txt"),
            ("filename=\"..\"", "attachment"),
            ("filename=\".\"", "attachment"),
            ("filename=\"\"", "attachment"),
            ("filename*=UTF-8''%E2%80%AEfdp.exe", "fdp.exe"),
            ("filename=\"C:\\\\Windows\\\\evil.bat\"", "C:_Windows_evil.bat"),
            ("filename=\".hidden\"", "hidden"),
            ("filename=\"report..pdf\"", "report.pdf"),
            ("filename*=UTF-8''%C2%85%C2%9Bc1.txt", "c1.txt"),
        ]
        let parts = names.map { "Content-Type: application/octet-stream\nContent-Disposition: attachment; \($0.encoded)\n\ndata" }
        let (_, attachments) = try parseEverySplit(Self.multipart(parts))
        #expect(attachments.map(\.info.fileName) == names.map(\.expected))
        for attachment in attachments {
            let name = attachment.info.fileName
            #expect(!name.isEmpty && !name.contains("/") && !name.contains("..") && !name.hasPrefix("."))
            #expect(!name.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        }
        #expect(attachments[0].info.originalFileName == "../../etc/passwd")
        #expect(attachments[2].info.originalFileName == "evil\u{0}name.txt")
    }

    @Test func longNamesAreCutKeepingTheExtension() throws {
        let long = String(repeating: "é", count: 300) + ".pdf"
        let (_, attachments) = try parse(Self.multipart(["Content-Disposition: attachment; filename=\"\(long)\"\n\nx"]))
        let name = attachments[0].info.fileName
        #expect(name.utf8.count <= 255)
        #expect(name.hasSuffix(".pdf"))
        #expect(name.hasPrefix("ééé"))
    }

    @Test func duplicateNamesAreAllReportedWithDistinctPaths() throws {
        let message = Self.multipart([
            "Content-Disposition: attachment; filename=same.txt\n\none",
            "Content-Disposition: attachment; filename=same.txt\n\ntwo",
            "Content-Type: text/plain; name=same.txt\n\nthree",
        ])
        let (_, attachments) = try parseEverySplit(message)
        #expect(attachments.map(\.info.fileName) == ["same.txt", "same.txt", "same.txt"])
        #expect(attachments.map(\.info.partPath) == ["1", "2", "3"])
        #expect(attachments.map { String(decoding: $0.bytes, as: UTF8.self) } == ["one", "two", "three"])
    }

    @Test func unknownCharsetLabelsNeverFailTheMessage() throws {
        let message = crlf("""
            From: =?x-klingon?Q?Kl=C3=A9ment?= <k@example.org>
            Subject: =?x-unknown?B?Y2Fmw6k=?= and =?x-unknown?Q?caf=E9?= =?gb2312?B?1tDOxA==?=
            MIME-Version: 1.0
            Content-Type: multipart/mixed; boundary=b

            --b
            Content-Type: text/plain; charset=x-unheard-of
            Content-Disposition: attachment; filename*=x-klingon''caf%C3%A9.txt

            hello
            --b
            Content-Disposition: attachment; filename*=x-mystery''caf%E9.txt

            hello
            --b--
            """)
        let (summary, attachments) = try parseEverySplit(message)
        #expect(summary.problems.isEmpty)
        #expect(summary.envelope.from == "Klément <k@example.org>")
        // Valid UTF-8 is read as UTF-8, anything else as Windows-1252; GB2312 is not known here.
        #expect(summary.envelope.subject == "café and café\u{D6}\u{D0}\u{CE}\u{C4}")
        #expect(attachments.map(\.info.fileName) == ["café.txt", "café.txt"])
    }

    @Test func notMIMEMessageHasNoAttachments() throws {
        let message = crlf("""
            From: plain@example.org
            Subject: hello
            Message-ID: <plain@example.org>

            Content-Disposition: attachment; filename=fake.txt
            --b
            begin 644 uuencoded.bin
            end
            """)
        let (summary, attachments) = try parseEverySplit(message)
        #expect(attachments.isEmpty)
        #expect(!summary.isMIME)
        #expect(summary.problems.isEmpty)
        #expect(!summary.isMalformed)
        #expect(summary.envelope.messageID == "<plain@example.org>")
        #expect(summary.envelope.subject == "hello")
    }

    @Test func emptyInputIsMalformed() throws {
        let (summary, attachments) = try parse([UInt8]())
        #expect(attachments.isEmpty)
        #expect(summary.problems.map(\.code) == [.emptyInput])
        #expect(summary.isMalformed)
        #expect(summary.byteCount == 0)
    }

    @Test func inputWithoutHeaderIsMalformed() throws {
        let (summary, attachments) = try parseEverySplit("this is not a mail\r\n--b\r\n\r\n")
        #expect(attachments.isEmpty)
        #expect(summary.problems.map(\.code) == [.noHeader])
        #expect(summary.isMalformed)
        let (blank, _) = try parse("\r\n\r\nbody\r\n")
        #expect(blank.problems.map(\.code) == [.noHeader])
    }

    @Test func multipartWithoutBoundaryIsSkipped() throws {
        let message = Self.head.replacingOccurrences(of: "MIME-Version: 1.0\r\n", with: "MIME-Version: 1.0\r\nContent-Type: multipart/mixed\r\n") + "\r\n--x\r\n"
        let (summary, attachments) = try parseEverySplit(message)
        #expect(attachments.isEmpty)
        #expect(summary.problems.map(\.code) == [.missingBoundary])
    }

    @Test func linesThatLookLikeBoundariesStayContent() throws {
        let body = "--b-not-the-end\n-- signature\n--\n-\n--bx\n  --b\n--b is here\nlast"
        let message = Self.multipart(["Content-Disposition: attachment; filename=dashes.txt\n\n" + body, "Content-Disposition: attachment; filename=two.txt\n\ntwo"])
        let (_, attachments) = try parseEverySplit(message)
        #expect(attachments.count == 2)
        #expect(String(decoding: attachments[0].bytes, as: UTF8.self) == crlf(body))
    }

    @Test func closingBoundaryWithoutLineBreakAndWithPaddingIsTaken() throws {
        let message = Self.multipart(["Content-Disposition: attachment; filename=a.txt\n\nA"], close: false) + "--b-- \t"
        let (summary, attachments) = try parseEverySplit(message)
        #expect(summary.problems.isEmpty)
        #expect(attachments.count == 1)
        #expect(attachments[0].damage.isEmpty)
        #expect(attachments[0].bytes == [0x41])
    }

    @Test func bareLineFeedsWork() throws {
        let message = Self.multipart(["Content-Disposition: attachment; filename=a.txt\n\nline1\nline2"]).replacingOccurrences(of: "\r\n", with: "\n")
        let (summary, attachments) = try parseEverySplit(message)
        #expect(summary.problems.isEmpty)
        #expect(attachments[0].bytes == Array("line1\nline2".utf8))
    }

    @Test func quotedPrintableEdgeCases() throws {
        let encoded = "soft=\nbreak =3D equals=20\ninvalid =ZZ and =4\nlower =c3=a9 end="
        let message = Self.multipart(["Content-Transfer-Encoding: quoted-printable\nContent-Disposition: attachment; filename=q.txt\n\n" + encoded])
        let (_, attachments) = try parseEverySplit(message)
        #expect(String(decoding: attachments[0].bytes, as: UTF8.self) == "softbreak = equals \r\ninvalid =ZZ and =4\r\nlower é end")
    }

    @Test func base64WithWhitespaceAndJunkDecodes() throws {
        let message = Self.multipart(["Content-Transfer-Encoding: BASE64\nContent-Disposition: attachment; filename=b.bin\n\n  SGVs bG8s\tIHdv\ncmxk!IQ==\n"])
        let (summary, attachments) = try parseEverySplit(message)
        #expect(attachments[0].bytes == Array("Hello, world!".utf8))
        #expect(attachments[0].damage == .invalidCharacters)
        #expect(summary.problems.isEmpty)
    }

    @Test func headerWithoutBlankLineStartsTheBody() throws {
        let message = Self.multipart(["Content-Transfer-Encoding: base64\nContent-Disposition: attachment; filename=b.bin\nSGVsbG8="])
        let (_, attachments) = try parseEverySplit(message)
        #expect(attachments[0].bytes == Array("Hello".utf8))
    }

    @Test func mboxFromLineIsTolerated() throws {
        let message = "From sender@example.org Tue Apr  1 10:00:00 2025\r\n" + Self.multipart(["Content-Disposition: attachment; filename=a.txt\n\nA"])
        let (summary, attachments) = try parseEverySplit(message)
        #expect(summary.problems.isEmpty)
        #expect(attachments.count == 1)
        #expect(summary.envelope.from == "Sender <s@example.org>")
    }

    @Test func base64EncodedForwardedMessageIsAPlainAttachment() throws {
        let message = Self.multipart(["Content-Type: message/rfc822\nContent-Transfer-Encoding: base64\nContent-Disposition: attachment; filename=fwd.eml\n\nU3ViamVjdDogaGkKCmJvZHkK"])
        let (_, attachments) = try parseEverySplit(message)
        #expect(attachments.map(\.info.fileName) == ["fwd.eml"])
        #expect(attachments[0].info.mimeType == "message/rfc822")
        #expect(attachments[0].bytes == Array("Subject: hi\n\nbody\n".utf8))
    }

    @Test func attachedMessagesCutInTheirHeaderOrEmptyAreLocatedExactly() throws {
        let message = Self.multipart([
            // The boundary comes inside the forwarded message's header.
            "Content-Type: message/rfc822\n\nSubject: cut\nX-More: yes",
            // Nothing at all after the part's header.
            "Content-Type: message/rfc822\n",
            "Content-Disposition: attachment; filename=after.txt\n\nafter",
        ])
        let (summary, _) = try parseEverySplit(message)
        let bytes = Array(message.utf8)
        let located = summary.attachments.filter(\.isAttachedMessage).map { record -> String in
            let range = record.byteRange ?? 0..<0
            return String(decoding: bytes[Int(range.lowerBound)..<Int(range.upperBound)], as: UTF8.self)
        }
        #expect(located == ["Subject: cut\r\nX-More: yes", ""])
        #expect(summary.attachments.map(\.info.fileName) == ["cut.eml", "message.eml", "after.txt"])
        #expect(summary.attachments.map(\.damage) == [[], [], []])
    }

    @Test func digestPartsDefaultToForwardedMessages() throws {
        let message = Self.head.replacingOccurrences(of: "MIME-Version: 1.0\r\n", with: "MIME-Version: 1.0\r\nContent-Type: multipart/digest; boundary=d\r\n") + crlf("""

            --d

            Subject: first
            Content-Type: text/plain
            Content-Disposition: attachment; filename=one.txt

            one
            --d--
            """)
        let (_, attachments) = try parseEverySplit(message)
        #expect(attachments.map(\.info.partPath) == ["1.1"])
        #expect(attachments.first?.info.enclosingMessage?.subject == "first")
    }

    @Test func topLevelSinglePartAttachment() throws {
        let message = crlf("""
            From: s@example.org
            MIME-Version: 1.0
            Content-Type: application/pdf; name="whole.pdf"
            Content-Transfer-Encoding: base64

            JVBERi0xLjQK
            """)
        let (summary, attachments) = try parseEverySplit(message)
        #expect(summary.problems.isEmpty)
        #expect(attachments.map(\.info.partPath) == ["1"])
        #expect(attachments[0].bytes == Array("%PDF-1.4\n".utf8))
        #expect(attachments[0].info.mimeType == "application/pdf")
    }

    @Test func tooManyPartsAreCut() throws {
        let parts = (0..<50).map { "Content-Disposition: attachment; filename=f\($0).txt\n\n\($0)" }
        let (summary, attachments) = try parse(Self.multipart(parts), limits: MailParser.Limits(maximumParts: 10))
        #expect(attachments.count == 10)
        #expect(summary.problems.map(\.code) == [.tooManyParts])
    }

    @Test func sinkErrorStopsTheParser() throws {
        struct Refused: Error {}
        final class RefusingSink: AttachmentSink {
            var ended = 0
            func beginAttachment(_ info: MailAttachmentInfo) throws -> Bool { true }
            func attachmentBytes(_ bytes: UnsafeRawBufferPointer) throws { throw Refused() }
            func endAttachment(_ info: MailAttachmentInfo, size: Int64, damage: AttachmentDamage) throws { ended += 1 }
        }
        let sink = RefusingSink()
        var parser = MailParser(sink: sink)
        let message = Array(Self.multipart(["Content-Disposition: attachment; filename=a.txt\n\nA"]).utf8)
        #expect(throws: Refused.self) {
            try parser.feed(message)
            _ = try parser.finish()
        }
        // Once failed, nothing more reaches the sink.
        try parser.feed(message)
        _ = try parser.finish()
        #expect(sink.ended == 0)
    }
}
