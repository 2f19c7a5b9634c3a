import Testing

@testable import DocRouteTypes

@Suite("MIME magic sniffing")
struct MIMEMagicTests {
    static let magic = MagicFileFixture.encode([
        // Written lowest priority first on purpose: the reader must order sections itself.
        (20, "application/x-generic-riff", [MagicRuleFixture(offset: 0, "RIFF")]),
        (
            50, "audio/x-wav",
            [
                MagicRuleFixture(offset: 0, "RIFF"),
                MagicRuleFixture(indent: 1, offset: 8, "WAVE"),
            ]
        ),
        (
            50, "application/x-deep",
            [
                MagicRuleFixture(offset: 0, "DEEP"),
                MagicRuleFixture(indent: 1, offset: 4, "A"),
                MagicRuleFixture(indent: 2, offset: 5, "1"),
                MagicRuleFixture(indent: 2, offset: 5, "2"),
                MagicRuleFixture(indent: 1, offset: 4, "B"),
            ]
        ),
        (
            60, "application/x-masked",
            [MagicRuleFixture(offset: 0, [0x50, 0x4B, 0x00], mask: [0xFF, 0xFF, 0xF0])]
        ),
        (60, "application/x-high-nibble", [MagicRuleFixture(offset: 0, [0x40, 0x01], mask: [0xF0, 0xFF])]),
        (60, "application/x-any-first", [MagicRuleFixture(offset: 0, [0x00, 0x7E, 0x7E], mask: [0x00, 0xFF, 0xFF])]),
        (55, "application/x-host16", [MagicRuleFixture(offset: 0, [0x12, 0x34], wordSize: 2)]),
        (55, "application/x-big16", [MagicRuleFixture(offset: 0, [0xAB, 0xCD], wordSize: 1)]),
        (45, "application/x-ranged", [MagicRuleFixture(offset: 4, "NEEDLE", rangeLength: 8)]),
        (
            45, "application/x-ranged-masked",
            [MagicRuleFixture(offset: 2, [0x00, 0x5A, 0x5A], mask: [0x00, 0xFF, 0xFF], rangeLength: 6)]
        ),
        (80, "application/x-late", [MagicRuleFixture(offset: 300, "LATE")]),
    ])

    let database: MIMEDatabase

    init() throws {
        database = try .fixture(magic: Self.magic)
    }

    func type(_ head: [UInt8]) -> String? {
        database.magicMatch(head: head)?.type
    }

    func type(_ text: String) -> String? {
        type(Array(text.utf8))
    }

    @Test func higherPriorityIsTriedFirstWhateverTheFileOrder() {
        #expect(
            database.magicMatch(head: Array("RIFF\0\0\0\0WAVEfmt ".utf8))
                == MIMEMagicMatch(type: "audio/x-wav", priority: 50)
        )
        #expect(
            database.magicMatch(head: Array("RIFF\0\0\0\0AVI LIST".utf8))
                == MIMEMagicMatch(type: "application/x-generic-riff", priority: 20)
        )
    }

    @Test func nestedRulesMeanParentAndAnyChild() {
        #expect(type("DEEPA1") == "application/x-deep")
        #expect(type("DEEPA2") == "application/x-deep")
        #expect(type("DEEPB") == "application/x-deep")
        #expect(type("DEEPA3") == nil)  // A matched but neither of its children
        #expect(type("DEEPC1") == nil)
        #expect(type("DEEP") == nil)
    }

    @Test func masksApplyToFileAndValue() {
        #expect(type([0x50, 0x4B, 0x0F]) == "application/x-masked")
        #expect(type([0x50, 0x4B, 0x10]) == nil)
        #expect(type([0x4F, 0x01]) == "application/x-high-nibble")
        #expect(type([0x3F, 0x01]) == nil)
        #expect(type([0x99, 0x7E, 0x7E]) == "application/x-any-first")
    }

    @Test func wordSizeSwapsHostOrderValuesOnLittleEndianMachines() {
        #if _endian(little)
            #expect(type([0x34, 0x12]) == "application/x-host16")
            #expect(type([0x12, 0x34]) == nil)
        #else
            #expect(type([0x12, 0x34]) == "application/x-host16")
        #endif
        #expect(type([0xAB, 0xCD]) == "application/x-big16")
    }

    @Test func rangeCoversStartOffsetPlusRangeLengthMinusOne() {
        let needle = Array("NEEDLE".utf8)
        // Offsets 4 through 11 are searched.
        #expect(type(Array(repeating: 0x2E, count: 4) + needle) == "application/x-ranged")
        #expect(type(Array(repeating: 0x2E, count: 11) + needle + [0x2E]) == "application/x-ranged")
        #expect(type(Array(repeating: 0x2E, count: 12) + needle) == nil)
        #expect(type(Array(repeating: 0x2E, count: 3) + needle) == nil)
        // A value cut off by the end of the head does not match.
        #expect(type(Array(repeating: 0x2E, count: 6) + Array("NEED".utf8)) == nil)
    }

    @Test func rangeWithMask() {
        #expect(type([0x2E, 0x2E, 0x2E, 0x2E, 0x2E, 0x2E, 0x2E, 0x01, 0x5A, 0x5A]) == "application/x-ranged-masked")
        #expect(type([0x2E, 0x2E, 0x2E, 0x2E, 0x2E, 0x2E, 0x2E, 0x2E, 0x01, 0x5A, 0x5A]) == nil)
    }

    @Test func rulesPastTheHeadDoNotMatchAndTheExtentIsReported() {
        #expect(database.maximumHeadLength == 304)
        #expect(type(Array(repeating: 0x2E, count: 300) + Array("LATE".utf8)) == "application/x-late")
        #expect(type(Array(repeating: 0x2E, count: 300) + Array("LAT".utf8)) == nil)
        #expect(database.magicMatch(head: []) == nil)
    }

    @Test func equalPriorityPrefersAGlobCandidate() throws {
        let database = try MIMEDatabase.fixture(
            globs2: "50:application/x-second:*.amb\n50:application/x-third:*.amb\n",
            magic: MagicFileFixture.encode([
                (50, "application/x-first", [MagicRuleFixture(offset: 0, "SAME")]),
                (50, "application/x-second", [MagicRuleFixture(offset: 0, "SAME")]),
            ])
        )
        let head = Array("SAME".utf8)
        #expect(database.magicMatch(head: head)?.type == "application/x-first")
        let named = database.detect(filename: "f.amb", head: head)
        #expect(named.mimeType == "application/x-second")
        #expect(named.decidedBy == .magic)
        #expect(database.detect(filename: nil, head: head).mimeType == "application/x-first")
    }

    @Test func unknownTrailingFieldSkipsOnlyThatLine() throws {
        var bytes = Array("MIME-Magic\0\n[50:application/x-a]\n>0=".utf8)
        bytes += [0x00, 0x02] + Array("AA".utf8) + Array("!future\n".utf8)
        bytes += Array(">0=".utf8) + [0x00, 0x02] + Array("BB".utf8) + [0x0A]
        let database = try MIMEDatabase.fixture(magic: bytes)
        #expect(database.magicMatch(head: Array("AA".utf8)) == nil)
        #expect(database.magicMatch(head: Array("BB".utf8))?.type == "application/x-a")
        #expect(database.issues.count == 1)
    }

    @Test func missingHeaderIsAnError() {
        let error = #expect(throws: MIMEDatabaseError.self) {
            _ = try MIMEDatabase.fixture(magic: Array("[50:text/x-a]\n".utf8))
        }
        #expect(error?.code == .magicHeaderMissing)
        #expect(error?.inputFile == "/fixture/mime/magic")
        #expect(error?.message.contains("update-mime-database") == true)
    }

    @Test func truncatedValueIsAnError() {
        var bytes = Array("MIME-Magic\0\n[50:text/x-a]\n>0=".utf8)
        bytes += [0x00, 0x10] + Array("short".utf8)
        let error = #expect(throws: MIMEDatabaseError.self) {
            _ = try MIMEDatabase.fixture(magic: bytes)
        }
        #expect(error?.code == .malformedMagic)
        #expect(error?.message.contains("past the end") == true)
    }

    @Test func ruleBeforeAnySectionIsAnError() {
        let bytes = Array("MIME-Magic\0\n>0=".utf8) + [0x00, 0x01, 0x41, 0x0A]
        let error = #expect(throws: MIMEDatabaseError.self) {
            _ = try MIMEDatabase.fixture(magic: bytes)
        }
        #expect(error?.code == .malformedMagic)
    }
}
