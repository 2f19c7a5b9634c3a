import Testing
@testable import DocRouteTypes

@Suite struct DynamicTypeIdentifierTests {
    // Published macOS output: `UTType(filenameExtension: "sql")` on a Mac with nothing claiming
    // .sql is dyn.ah62d4rv4ge81g6pq, the value handler authors paste into Info.plist files.
    @Test func encodesExtensionsAsMacOSDoes() {
        #expect(DynamicTypeIdentifier(tagClass: .filenameExtension, tag: "sql").identifier == "dyn.ah62d4rv4ge81g6pq")
        #expect(DynamicTypeIdentifier(tagClass: .filenameExtension, tag: "sql").payload == "?0=6:1=sql")
    }

    @Test(arguments: ["pdb", "x", "longer-extension", "ünïcode", "a:b=c,d\\e"])
    func roundTrips(tag: String) throws {
        let encoded = DynamicTypeIdentifier(tagClass: .filenameExtension, tag: tag)
        let decoded = try #require(DynamicTypeIdentifier(decoding: encoded.identifier))
        #expect(decoded.tags[.filenameExtension] == [tag])
        #expect(decoded.conformsTo == ["public.data"])
    }

    @Test func decodesMIMETagsAndParents() throws {
        let encoded = DynamicTypeIdentifier(tagClass: .mimeType, tag: "chemical/x-pdb", conformingTo: "public.text")
        #expect(encoded.payload == "?0=7:3=chemical/x-pdb")
        let decoded = try #require(DynamicTypeIdentifier(decoding: encoded.identifier))
        #expect(decoded.tags[.mimeType] == ["chemical/x-pdb"])
        #expect(decoded.conformsTo == ["public.text"])
    }

    @Test(arguments: ["public.data", "dyn.", "dyn.a", "dyn.aiiii", "dyn.b62d4rv4ge81g6pq"])
    func rejectsWhatIsNotAnEncoding(text: String) {
        #expect(DynamicTypeIdentifier(decoding: text) == nil)
    }

    @Test func catalogKnowsDynamicAncestors() {
        let dyn = DynamicTypeIdentifier(tagClass: .filenameExtension, tag: "xyz").identifier
        #expect(TypeCatalog.system.ancestors(of: dyn) == ["public.data", "public.item"])
        #expect(TypeCatalog.system.preferredFilenameExtension(for: dyn) == "xyz")
    }
}
