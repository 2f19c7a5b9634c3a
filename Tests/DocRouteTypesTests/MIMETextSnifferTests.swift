import Testing

@testable import DocRouteTypes

/// Each expectation was checked against `gio info` (GLib 2.74) on a file holding those bytes.
@Suite("MIME text-or-binary fallback")
struct MIMETextSnifferTests {
    @Test func textWithWhitespaceAndUTF8IsText() {
        #expect(MIMETextSniffer.looksLikeText(Array("tab\there\r\nform\u{0C}feed €uro 😀\n".utf8)))
        #expect(MIMETextSniffer.looksLikeText([]))
        #expect(MIMETextSniffer.looksLikeText(Array("bold b\u{08}b overstrike\n".utf8)))
        #expect(MIMETextSniffer.looksLikeText(Array("delete \u{7F}".utf8)))
    }

    @Test func controlCharactersInTheFirst128BytesMakeItBinary() {
        #expect(!MIMETextSniffer.looksLikeText(Array("nul\0inside".utf8)))
        #expect(!MIMETextSniffer.looksLikeText(Array("escape \u{1B}[1m".utf8)))
        #expect(!MIMETextSniffer.looksLikeText(Array("vertical\u{0B}tab".utf8)))
        #expect(!MIMETextSniffer.looksLikeText(Array(repeating: 0x61, count: 127) + [0x00]))
        // Past byte 128 a control character no longer decides.
        #expect(MIMETextSniffer.looksLikeText(Array(repeating: 0x61, count: 128) + [0x00]))
        #expect(MIMETextSniffer.looksLikeText(Array(repeating: 0x61, count: 1000) + [0x00, 0x61]))
    }

    @Test func highBitBytesAreText() {
        #expect(MIMETextSniffer.looksLikeText([0x63, 0x61, 0x66, 0xE9, 0x20, 0x6F, 0x6B]))  // Latin-1 "café ok"
        #expect(MIMETextSniffer.looksLikeText([0xC0, 0xAF, 0x20, 0x6F, 0x6B]))  // overlong "/"
        #expect(MIMETextSniffer.looksLikeText([0xFF, 0xFE, 0x80, 0x61]))
        // Once a control character rules out the first look, a backspace or form feed is tolerated
        // but nothing else anywhere in the sniffed head.
        #expect(MIMETextSniffer.looksLikeText(Array("a\u{08}b".utf8) + Array(repeating: 0x61, count: 300)))
        #expect(!MIMETextSniffer.looksLikeText(Array("a\u{08}b".utf8) + Array(repeating: 0x61, count: 300) + [0x00]))
        #expect(!MIMETextSniffer.looksLikeText(Array("a\u{08}b".utf8) + Array(repeating: 0x61, count: 300) + [0x7F]))
    }
}
