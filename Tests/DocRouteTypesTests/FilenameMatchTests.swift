import Testing
@testable import DocRouteTypes

@Suite struct FilenameMatchTests {
    static let catalog: TypeCatalog = {
        var builder = TypeCatalogBuilder.withSystemTypes()
        builder.add(TypeDeclaration(
            identifier: "com.sunsetlakesoftware.molecules.pdb", conformsTo: ["public.plain-text", "public.text"],
            filenameExtensions: ["pdb"], mimeTypes: ["chemical/x-pdb"], origin: .exported(bundleIdentifier: "com.sunsetlakesoftware.molecules")))
        return builder.build()
    }()

    @Test(arguments: [
        ("1abc.pdb", "com.sunsetlakesoftware.molecules.pdb", nil, ".pdb"),
        ("1abc.PDB.GZ", "org.gnu.gnu-zip-archive", "com.sunsetlakesoftware.molecules.pdb", ".PDB.GZ"),
        ("backup.tar.gz", "org.gnu.gnu-zip-archive", "public.tar-archive", ".tar.gz"),
        ("backup.tgz", "org.gnu.gnu-zip-tar-archive", "public.tar-archive", ".tgz"),
        ("backup.tar.xz", "org.tukaani.xz-archive", "public.tar-archive", ".tar.xz"),
        ("report.v2.pdf", "com.adobe.pdf", nil, ".pdf"),
        ("notes.unknown.gz", "org.gnu.gnu-zip-archive", nil, ".gz"),
        ("dir.d/photo.JPG", "public.jpeg", nil, ".JPG"),
    ] as [(String, String, String?, String)])
    func typesByName(name: String, type: String, inner: String?, chain: String) {
        let match = Self.catalog.match(filename: name)
        #expect(match.contentType == type)
        #expect(match.innerContentType == inner)
        #expect(match.extensionChain == chain)
    }

    @Test func withoutMoleculesAPdbIsUnknown() {
        let match = TypeCatalog.system.match(filename: "1abc.pdb.gz")
        #expect(match.contentType == "org.gnu.gnu-zip-archive")
        #expect(match.innerContentType == nil)
        #expect(TypeCatalog.system.match(filename: "1abc.pdb").unknownExtension == "pdb")
    }

    @Test(arguments: [".bashrc", "Makefile", "trailing.", "a/.hidden", "dots.d/noext"])
    func namesWithoutExtension(name: String) {
        #expect(Self.catalog.match(filename: name) == FilenameMatch())
    }
}
