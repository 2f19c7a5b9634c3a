import Testing

@testable import DocRouteTypes

@Suite("MIME detection order")
struct MIMEDetectionTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D]
    static let ole: [UInt8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0x00, 0x00]

    let database: MIMEDatabase

    init() throws {
        database = try .fixture(
            globs2: """
                50:image/png:*.png
                50:text/plain:*.txt
                50:application/msword:*.doc
                50:text/plain:*.doc
                50:application/json:*.json
                50:application/schema+json:*.json
                50:audio/ogg:*.ogg
                50:video/ogg:*.ogg
                """,
            magic: MagicFileFixture.encode([
                (50, "image/png", [MagicRuleFixture(offset: 0, Array(Self.png.prefix(8)))]),
                (50, "application/x-ole-storage", [MagicRuleFixture(offset: 0, Array(Self.ole.prefix(8)))]),
                (50, "application/ogg", [MagicRuleFixture(offset: 0, "OggS")]),
                (
                    55, "video/ogg",
                    [MagicRuleFixture(offset: 0, "OggS"), MagicRuleFixture(indent: 1, offset: 28, "\u{01}video")]
                ),
            ]),
            subclasses: """
                application/msword application/x-ole-storage
                application/schema+json application/json
                application/json application/javascript
                application/javascript text/plain
                audio/ogg application/ogg
                video/ogg application/ogg
                """
        )
    }

    @Test func singleGlobResultIsFinalAndContentIsNotConsulted() {
        let detection = database.detect(filename: "logo.png", head: Array("not a png at all".utf8))
        #expect(detection.mimeType == "image/png")
        #expect(detection.decidedBy == .glob)
        #expect(detection.magic == nil)
    }

    /// The spec's checking order: "If after this, there is one or more matching glob, and all the
    /// matching globs result in the same mimetype, use that mimetype as the result." Content is
    /// only read when globs fail or conflict, so a PNG named x.txt is text/plain (GIO agrees).
    @Test func pngNamedTxtFollowsTheNameAsTheSpecSays() {
        let detection = database.detect(filename: "x.txt", head: Self.png)
        #expect(detection.mimeType == "text/plain")
        #expect(detection.decidedBy == .glob)
    }

    @Test func strongMagicCanOverrideTheNameWhenAskedTo() {
        let options = MIMEDetectionOptions(contentOverridesNameAtPriority: 50)
        let detection = database.detect(filename: "x.txt", head: Self.png, options: options)
        #expect(detection.mimeType == "image/png")
        #expect(detection.decidedBy == .magic)
        #expect(detection.globCandidates == ["text/plain"])
        // Below the threshold the name still wins, and a text head keeps the name too.
        let strict = MIMEDetectionOptions(contentOverridesNameAtPriority: 80)
        #expect(database.detect(filename: "x.txt", head: Self.png, options: strict).mimeType == "text/plain")
        #expect(
            database.detect(filename: "x.txt", head: Array("hello\n".utf8), options: options).mimeType == "text/plain"
        )
    }

    @Test func overrideKeepsTheNameWhenContentIsAParentOfIt() {
        // x.ogg named video, content only says "Ogg container" (a parent): keep the more specific name.
        let database = try? MIMEDatabase.fixture(
            globs2: "50:video/ogg:*.ogv\n",
            magic: MagicFileFixture.encode([(50, "application/ogg", [MagicRuleFixture(offset: 0, "OggS")])]),
            subclasses: "video/ogg application/ogg\n"
        )
        let options = MIMEDetectionOptions(contentOverridesNameAtPriority: 10)
        let detection = database?.detect(filename: "clip.ogv", head: Array("OggS\0\0\0".utf8), options: options)
        #expect(detection?.mimeType == "video/ogg")
        #expect(detection?.decidedBy == .glob)
    }

    @Test func ambiguousNameIsSettledByMagicThroughSubclassing() {
        // The spec's own example: foo.doc is Word when the content is OLE storage...
        let word = database.detect(filename: "foo.doc", head: Self.ole)
        #expect(word.mimeType == "application/msword")
        #expect(word.decidedBy == .magic)
        #expect(word.globCandidates == ["application/msword", "text/plain"])
        #expect(word.magic == MIMEMagicMatch(type: "application/x-ole-storage", priority: 50))
        // ...and plain text when it is text.
        let text = database.detect(filename: "foo.doc", head: Array("Meeting notes\n".utf8))
        #expect(text.mimeType == "text/plain")
        #expect(text.decidedBy == .glob)
    }

    @Test func ambiguousNameWithMagicForOneCandidate() {
        let video = database.detect(filename: "clip.ogg", head: Self.oggPage(kind: "\u{01}video"))
        #expect(video.mimeType == "video/ogg")
        #expect(video.decidedBy == .magic)
        let audio = database.detect(filename: "song.ogg", head: Self.oggPage(kind: "\u{01}vorbis"))
        // Magic says only application/ogg; both candidates are subclasses, the best-ranked one wins.
        #expect(audio.mimeType == "audio/ogg")
        #expect(audio.magic?.type == "application/ogg")
    }

    @Test func ambiguousNameWithoutUsefulContentKeepsTheBestRankedGlob() {
        let detection = database.detect(filename: "data.json", head: [0x00, 0x01, 0x02])
        #expect(detection.globCandidates == ["application/json", "application/schema+json"])
        #expect(detection.mimeType == "application/json")
        #expect(detection.decidedBy == .glob)
    }

    @Test func noGlobMeansMagic() {
        let detection = database.detect(filename: "download", head: Self.png)
        #expect(detection.mimeType == "image/png")
        #expect(detection.decidedBy == .magic)
        #expect(detection.globCandidates.isEmpty)
    }

    @Test func noGlobNoMagicFallsBackToTextOrBinary() {
        let text = database.detect(filename: "NOTES", head: Array("Grüße aus Köln\r\n\tline two\n".utf8))
        #expect(text.mimeType == "text/plain")
        #expect(text.decidedBy == .textFallback)
        let binary = database.detect(filename: nil, head: [0x7F, 0x00, 0x01, 0x02])
        #expect(binary.mimeType == "application/octet-stream")
        #expect(binary.decidedBy == .binaryFallback)
        let empty = database.detect(filename: nil, head: [])
        #expect(empty.mimeType == "text/plain")
        #expect(empty.decidedBy == .textFallback)
    }

    @Test func contentOnlyIgnoresTheName() {
        let detection = database.detect(filename: "logo.txt", head: Self.png, options: .contentOnly)
        #expect(detection.mimeType == "image/png")
        #expect(detection.decidedBy == .magic)
        #expect(detection.globCandidates.isEmpty)
        #expect(
            database.detect(filename: "logo.png", head: Array("plain".utf8), options: .contentOnly).mimeType
                == "text/plain"
        )
    }

    @Test func rawBufferOverloadAgreesWithArrayOverload() {
        let head = Self.ole
        let viaBuffer = head.withUnsafeBytes { database.detect(filename: "foo.doc", head: $0) }
        #expect(viaBuffer == database.detect(filename: "foo.doc", head: head))
        #expect(head.withUnsafeBytes { database.magicMatch(head: $0) } == database.magicMatch(head: head))
    }

    static func oggPage(kind: String) -> [UInt8] {
        Array("OggS".utf8) + Array(repeating: 0, count: 24) + Array(kind.utf8) + [0, 0, 0]
    }
}
