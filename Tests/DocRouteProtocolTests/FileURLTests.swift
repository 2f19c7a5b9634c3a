import DocRouteProtocol
import Testing

@Suite struct FileURLTests {
    @Test func keepsSlashesAndUnreservedCharacters() throws {
        #expect(
            try FileURL.string(forAbsolutePath: "/var/lib/docroute/containers/com.sunsetlakesoftware.molecules/Documents/Inbox/Mail/1abc-1_x~.pdb")
                == "file:///var/lib/docroute/containers/com.sunsetlakesoftware.molecules/Documents/Inbox/Mail/1abc-1_x~.pdb")
    }

    @Test func encodesSpacesPercentHashQueryAndNonASCII() throws {
        #expect(
            try FileURL.string(forAbsolutePath: "/srv/Quarterly Report 100%#2?.txt")
                == "file:///srv/Quarterly%20Report%20100%25%232%3F.txt")
        #expect(try FileURL.string(forAbsolutePath: "/srv/Grüße/ü.pdb") == "file:///srv/Gr%C3%BC%C3%9Fe/%C3%BC.pdb")
        #expect(try FileURL.string(forAbsolutePath: "/a:b@c;d=e+f,g&h$i'j(k)l*m!n") == "file:///a%3Ab%40c%3Bd%3De%2Bf%2Cg%26h%24i%27j%28k%29l%2Am%21n")
    }

    @Test func nonUTF8NameBytesSurviveTheRoundTrip() throws {
        // Latin-1 "café" and a lone continuation byte: not valid UTF-8.
        let path: [UInt8] = Array("/srv/inbox/caf".utf8) + [0xE9, 0x80, 0xFF] + Array(".txt".utf8)
        let url = try FileURL.string(forAbsolutePath: path)
        #expect(url == "file:///srv/inbox/caf%E9%80%FF.txt")
        #expect(try FileURL.path(fromURLString: url) == path)
    }

    @Test(arguments: [
        "/", "/a b/c%d/e#f?g", "/srv/shared/1abc.pdb", "/ü/日本語.pdb", "/\u{7F}\u{1}tab\there",
    ])
    func textPathsRoundTrip(_ path: String) throws {
        let url = try FileURL.string(forAbsolutePath: path)
        #expect(url.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F })
        #expect(try FileURL.path(fromURLString: url) == Array(path.utf8))
    }

    @Test func readsTheOtherSpellingsOfALocalFileURL() throws {
        #expect(try FileURL.path(fromURLString: "file:///srv/shared/1abc.pdb") == bytes("/srv/shared/1abc.pdb"))
        #expect(try FileURL.path(fromURLString: "FILE://localhost/srv/a%2fb") == bytes("/srv/a/b"))
        #expect(try FileURL.path(fromURLString: "file:/srv/x") == bytes("/srv/x"))
        #expect(try FileURL.path(fromURLString: "file:///srv/unencoded ü") == bytes("/srv/unencoded ü"))
    }

    @Test(arguments: [
        ("todolist://www.acme.com?Quarterly%20Report#200806231300", "is not a file URL"),
        ("file://example.com/srv/x", "names host 'example.com'"),
        ("file:///srv/x#frag", "has a query or fragment"),
        ("file:///srv/x?q", "has a query or fragment"),
        ("file:///srv/%4", "malformed percent escape"),
        ("file:///srv/%zz", "malformed percent escape"),
        ("file:///srv/%00", "encodes a NUL byte"),
        ("file:relative", "has no absolute path"),
    ])
    func rejectsWhatIsNotALocalAbsolutePath(_ url: String, _ problem: String) {
        let error = #expect(throws: ProtocolError.self) { try FileURL.path(fromURLString: url) }
        #expect(error?.code == .badRequest)
        #expect(error?.message.contains(problem) == true, "\(error?.message ?? "no error")")
    }

    @Test func rejectsRelativePathsAndNUL() {
        #expect(throws: ProtocolError.self) { try FileURL.string(forAbsolutePath: "srv/x") }
        #expect(throws: ProtocolError.self) { try FileURL.string(forAbsolutePath: [0x2F, 0x61, 0x00]) }
    }

    @Test func tellsFileURLsFromCustomSchemes() {
        #expect(FileURL.isFileURL("file:///a"))
        #expect(FileURL.isFileURL("File:///a"))
        #expect(!FileURL.isFileURL("todolist://www.acme.com?Quarterly%20Report#200806231300"))
        #expect(!FileURL.isFileURL("fil"))
    }
}
