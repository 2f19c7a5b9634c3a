import Testing

@testable import DocRouteTypes

@Suite("MIME text-or-binary fallback")
struct MIMETextSnifferTests {
    @Test func textWithWhitespaceAndUTF8IsText() {
        #expect(MIMETextSniffer.looksLikeText(Array("tab\there\r\nform\u{0C}feed vt\u{0B} €uro 😀\n".utf8)))
        #expect(MIMETextSniffer.looksLikeText([]))
        #expect(MIMETextSniffer.looksLikeText(Array("bold b\u{08}b overstrike\n".utf8)))
    }

    @Test func controlCharactersInTheFirst128BytesMakeItBinary() {
        #expect(!MIMETextSniffer.looksLikeText(Array("nul\0inside".utf8)))
        #expect(!MIMETextSniffer.looksLikeText(Array("escape \u{1B}[1m".utf8)))
        #expect(!MIMETextSniffer.looksLikeText(Array("delete \u{7F}".utf8)))
        // Past byte 128 a control character no longer decides.
        #expect(MIMETextSniffer.looksLikeText(Array(repeating: 0x61, count: 128) + [0x00]))
    }

    @Test func invalidUTF8IsBinary() {
        #expect(!MIMETextSniffer.looksLikeText([0x63, 0x61, 0x66, 0xE9, 0x20, 0x6F, 0x6B]))  // Latin-1 "café ok"
        #expect(!MIMETextSniffer.looksLikeText([0xC0, 0xAF]))  // overlong "/"
        #expect(!MIMETextSniffer.looksLikeText([0xED, 0xA0, 0x80]))  // UTF-16 surrogate
        #expect(!MIMETextSniffer.looksLikeText([0xF4, 0x90, 0x80, 0x80]))  // past U+10FFFF
        #expect(!MIMETextSniffer.looksLikeText(Array(repeating: 0x61, count: 300) + [0xFF, 0x61]))
    }

    @Test func aSequenceCutByTheEndOfTheHeadIsAccepted() {
        let euro: [UInt8] = [0xE2, 0x82, 0xAC]
        #expect(MIMETextSniffer.looksLikeText(Array("price: ".utf8) + euro.prefix(2)))
        #expect(!MIMETextSniffer.looksLikeText(Array("price: ".utf8) + [0xE2, 0x41]))
        // Only the first utf8Window bytes are validated.
        let long = Array(repeating: UInt8(0x61), count: MIMETextSniffer.utf8Window - 1) + euro
        #expect(MIMETextSniffer.looksLikeText(long + [0xFF]))
    }
}
