import DocRouteMail
import DocRouteTestSupport
import Foundation
import Testing

@Suite struct HeaderDecodingTests {
    @Test(arguments: [
        ("=?UTF-8?B?w6l0w6k=?=", "été"),
        ("=?utf-8?q?caf=C3=A9_cr=C3=A8me?=", "café crème"),
        ("=?ISO-8859-1?Q?Andr=E9?= Pirard <PIRARD@vm1.ulg.ac.be>", "André Pirard <PIRARD@vm1.ulg.ac.be>"),
        ("=?iso-8859-2?Q?=A9koda?=", "Škoda"),
        ("=?windows-1251?B?z/Do4uXy?=", "Привет"),
        ("=?koi8-r?B?8NLJ18XU?=", "Привет"),
        ("=?ISO-8859-15?Q?=A4uro?=", "€uro"),
        ("=?iso-8859-1?q?this=20is=20some=20text?=", "this is some text"),
        // Whitespace between adjacent words goes; between a word and text it stays.
        ("=?UTF-8?Q?a?= =?UTF-8?Q?b?=", "ab"),
        ("=?UTF-8?Q?a?=\t  =?UTF-8?Q?b?= c", "ab c"),
        ("=?UTF-8?Q?a?= b =?UTF-8?Q?c?=", "a b c"),
        // A UTF-8 character split across two words comes out whole.
        ("=?UTF-8?B?w6k=?= =?UTF-8?B?w6k=?=", "éé"),
        ("=?UTF-8?Q?=C3?= =?UTF-8?Q?=A9?=", "é"),
        // RFC 2231 language suffix on the charset.
        ("=?UTF-8*fr?Q?=C3=A9t=C3=A9?=", "été"),
        // Malformed words stay as written.
        ("=?UTF-8?X?abc?=", "=?UTF-8?X?abc?="),
        ("=?UTF-8?Q?unterminated", "=?UTF-8?Q?unterminated"),
        ("=??Q?abc?=", "=??Q?abc?="),
        ("plain text", "plain text"),
        ("=?UTF-8?B?=?=", ""),
        // Raw 8-bit header text (RFC 6532).
        ("Zoë", "Zoë"),
    ])
    func encodedWords(_ input: String, _ expected: String) {
        #expect(EncodedWords.decode(input) == expected)
    }

    @Test func rawLatin1HeaderBytesAreRead() {
        #expect(EncodedWords.decode([0x63, 0x61, 0x66, 0xE9]) == "café")
        #expect(EncodedWords.decode([0x93, 0x71, 0x94]) == "\u{201C}q\u{201D}")
    }

    @Test(arguments: [
        ("attachment; filename*=UTF-8''%C3%A9t%C3%A9.pdf", "été.pdf"),
        ("attachment; filename*0*=UTF-8''%C3%A9t; filename*1=\"e part\"; filename*2*=%C3%A9.txt", "éte parté.txt"),
        ("attachment; filename*1=b.txt; filename*0=a", "ab.txt"),
        ("attachment; filename*=iso-8859-1'fr'caf%E9.txt", "café.txt"),
        ("attachment; filename*=\"UTF-8''quoted%20value.txt\"", "quoted value.txt"),
        ("attachment; filename=\"plain.txt\"; filename*=UTF-8''better%E2%9C%93.txt", "better✓.txt"),
        ("attachment; filename=\"=?UTF-8?B?w6l0w6kucGRm?=\"", "été.pdf"),
        ("attachment; filename=unquoted name with spaces.txt ; size=3", "unquoted name with spaces.txt"),
        ("attachment (a comment); (another) filename=\"x\\\"y.txt\"", "x\"y.txt"),
        ("attachment; filename=\"unterminated.txt", "unterminated.txt"),
        ("attachment; filename*0*=''%41; filename*1*=%42", "AB"),
        ("attachment; FILENAME=\"Upper.TXT\"", "Upper.TXT"),
    ])
    func parameters(_ header: String, _ expected: String) {
        let value = MIMEHeaderValue(parsing: Array(header.utf8))
        #expect(value.value == "attachment")
        #expect(value.parameters.text(for: "filename") == expected)
    }

    @Test func contentTypeValueAndMediaType() {
        let value = MIMEHeaderValue(parsing: Array(" Text/HTML (comment) ; charset=\"utf-8\"; boundary=abc".utf8))
        #expect(value.value == "text/html")
        #expect(value.mediaType?.type == "text")
        #expect(value.mediaType?.subtype == "html")
        #expect(value.parameters.text(for: "charset") == "utf-8")
        #expect(MIMEHeaderValue(parsing: Array("garbage".utf8)).mediaType == nil)
        #expect(MIMEHeaderValue(parsing: Array("".utf8)).value == "")
    }

    @Test(arguments: [
        ("report.pdf", "report.pdf"),
        ("../../etc/passwd", "_._etc_passwd"),
        ("a/b\\c", "a_b_c"),
        ("  spaced name.txt  ", "spaced name.txt"),
        ("...", "attachment"),
        ("", "attachment"),
        ("x\u{7F}y\u{0}z", "xyz"),
        ("\u{202E}gpj.exe", "gpj.exe"),
        ("file...name", "file.name"),
        ("日本語.docx", "日本語.docx"),
    ])
    func fileNameSanitising(_ input: String, _ expected: String) {
        #expect(AttachmentFileName.sanitize(input) == expected)
    }

    @Test func charsetLabels() {
        #expect(MailCharset(label: "UTF8")?.name == "utf-8")
        #expect(MailCharset(label: "latin1")?.name == "iso-8859-1")
        #expect(MailCharset(label: "ISO_8859-2:1987")?.name == "iso-8859-2")
        #expect(MailCharset(label: "iso8859-15")?.name == "iso-8859-15")
        #expect(MailCharset(label: "cp1251")?.name == "windows-1251")
        #expect(MailCharset(label: "x-cp1250")?.name == "windows-1250")
        #expect(MailCharset(label: "us-ascii")?.name == "us-ascii")
        #expect(MailCharset(label: "utf-8*en")?.name == "utf-8")
        #expect(MailCharset(label: "iso-8859-12") == nil)
        #expect(MailCharset(label: "x-unknown") == nil)
        #expect(MailCharset(label: "gb2312") == nil)
        // Latin-1 labels read the C1 range as Windows-1252 does.
        #expect(MailCharset(label: "iso-8859-1")?.decode([0x80, 0xE9]) == "€é")
        #expect(MailCharset(label: "utf-8")?.decode([0xC3]) == nil)
        #expect(MailCharset.decodeLeniently([0xC3], label: "utf-8") == "Ã")
        #expect(MailCharset(label: "utf-7")?.decode(Array("Hi Mom -+Jjo--!".utf8)) == "Hi Mom -☺-!")
    }

    /// Every table against Python's own codecs, byte by byte.
    @Test func charsetTablesMatchPythonCodecs() throws {
        let data = try Fixtures.python("charset_tables.py", ["json"])
        let tables = try JSONDecoder().decode([String: [UInt32?]].self, from: data)
        #expect(tables.count >= 28)
        for (label, codePoints) in tables {
            let charset = try #require(MailCharset(label: label), "\(label) not known")
            for (offset, codePoint) in codePoints.enumerated() {
                let decoded = charset.decode([UInt8(0x80 + offset)])
                let expected = codePoint.flatMap(Unicode.Scalar.init).map { String($0) } ?? "\u{FFFD}"
                #expect(decoded == expected, "\(label) byte 0x\(String(0x80 + offset, radix: 16))")
            }
        }
    }
}
