import DocRouteTestSupport
import Foundation
import Testing

@testable import DocRouteTypes

/// Kept outside the suite because its traits cannot refer to the suite itself.
private enum MIMECompiler {
    static let path = ["/usr/bin/update-mime-database", "/usr/local/bin/update-mime-database"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// The detection cases the name-first typing used to miss, against a database that the real
/// `update-mime-database` compiles from a small shared-mime-info XML written here, so that what is
/// tested is how docroute reads that tool's output as well as the algorithm. The full suite runs in
/// `make test` (scripts/mime-conformance.py).
@Suite(.enabled(if: MIMECompiler.path != nil,
                "update-mime-database (Debian's shared-mime-info) is not installed; `make deps` installs it"))
struct MIMECompiledDatabaseTests {
    static let packageXML = """
        <?xml version="1.0" encoding="UTF-8"?>
        <mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">
          <mime-type type="text/plain"><glob pattern="*.txt"/><glob pattern="*.asc"/></mime-type>
          <mime-type type="application/pgp-signature">
            <sub-class-of type="text/plain"/>
            <magic><match type="string" offset="0" value="-----BEGIN PGP SIGNATURE-----"/></magic>
            <glob pattern="*.asc" weight="10"/><glob pattern="*.sig"/>
          </mime-type>
          <mime-type type="application/pgp-keys">
            <sub-class-of type="text/plain"/>
            <magic><match type="string" offset="0" value="-----BEGIN PGP PUBLIC KEY BLOCK-----"/></magic>
            <glob pattern="*.asc" weight="10"/>
          </mime-type>
          <mime-type type="application/pkix-cert"><glob pattern="*.crt"/></mime-type>
          <mime-type type="application/x-x509-ca-cert">
            <magic><match type="string" offset="0" value="-----BEGIN CERTIFICATE-----"/></magic>
            <glob pattern="*.crt" weight="40"/>
          </mime-type>
          <mime-type type="application/x-commodore-crt">
            <magic><match type="string" offset="0" value="C64 CARTRIDGE"/></magic>
            <glob pattern="*.crt" weight="30"/>
          </mime-type>
          <mime-type type="chemical/x-pdb"><sub-class-of type="text/plain"/><glob pattern="*.pdb"/></mime-type>
          <mime-type type="application/x-aportisdoc">
            <magic><match type="string" offset="60" value="TEXtREAd"/></magic>
            <glob pattern="*.pdb" weight="30"/>
          </mime-type>
          <mime-type type="application/zip">
            <magic priority="40"><match type="string" offset="0" value="PK\\003\\004"/></magic>
            <glob pattern="*.zip"/>
          </mime-type>
          <mime-type type="application/vnd.openxmlformats-officedocument.wordprocessingml.document">
            <sub-class-of type="application/zip"/><glob pattern="*.docx"/>
          </mime-type>
          <mime-type type="image/heif"><glob pattern="*.heif"/><glob pattern="*.heic"/></mime-type>
          <mime-type type="application/gzip">
            <magic><match type="string" offset="0" value="\\037\\213"/></magic><glob pattern="*.gz"/>
          </mime-type>
          <mime-type type="application/x-compressed-tar">
            <sub-class-of type="application/gzip"/><glob pattern="*.tar.gz"/><glob pattern="*.tgz"/>
          </mime-type>
          <mime-type type="application/x-core"><glob pattern="core" case-sensitive="true"/></mime-type>
          <mime-type type="text/x-csrc"><sub-class-of type="text/plain"/><glob pattern="*.c" case-sensitive="true"/></mime-type>
          <mime-type type="text/x-c++src"><sub-class-of type="text/plain"/><glob pattern="*.C" case-sensitive="true"/></mime-type>
        </mime-info>
        """

    let engine: TypeEngine

    init() throws {
        let folder = try TemporaryFolder("mime")
        defer { folder.remove() }
        let root = URL(fileURLWithPath: folder.string)
        let packages = root.appendingPathComponent("share/mime/packages")
        try FileManager.default.createDirectory(at: packages, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: root.appendingPathComponent("home"), withIntermediateDirectories: true)
        try Self.packageXML.write(to: packages.appendingPathComponent("test.xml"), atomically: true, encoding: .utf8)
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: try #require(MIMECompiler.path))
        compiler.arguments = [root.appendingPathComponent("share/mime").path]
        compiler.standardOutput = FileHandle.nullDevice
        compiler.standardError = FileHandle.nullDevice
        try compiler.run()
        compiler.waitUntilExit()
        try #require(compiler.terminationStatus == 0, "update-mime-database failed")
        let database = try MIMEDatabase.load(environment: [
            "XDG_DATA_HOME": root.appendingPathComponent("home").path,
            "XDG_DATA_DIRS": root.appendingPathComponent("share").path,
        ])
        var builder = TypeCatalogBuilder.withSystemTypes()
        builder.add(TypeDeclaration(
            identifier: "com.sunsetlakesoftware.molecules.pdb", conformsTo: ["public.plain-text", "public.text"],
            filenameExtensions: ["pdb"], mimeTypes: ["chemical/x-pdb"],
            origin: .exported(bundleIdentifier: "com.sunsetlakesoftware.molecules")))
        engine = TypeEngine(catalog: builder.build(), mimeDatabase: database)
    }

    func typed(_ name: String, _ text: String) -> TypeClassification {
        engine.classify(filename: name, head: Array(text.utf8))
    }

    @Test func armoredOpenPGPIsToldApartByContent() {
        let signature = typed("COPYING.asc", "-----BEGIN PGP SIGNATURE-----\n\niQIz\n")
        #expect(signature.mimeType == "application/pgp-signature")
        #expect(signature.contentType == "org.openpgp.armored")
        #expect(typed("key.asc", "-----BEGIN PGP PUBLIC KEY BLOCK-----\n").mimeType == "application/pgp-keys")
        // No magic: the highest-weight candidate the text agrees with.
        #expect(typed("notes.asc", "just words\n").mimeType == "text/plain")
    }

    @Test func certificateOrCartridge() {
        let certificate = typed("test-ca.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n")
        #expect(certificate.mimeType == "application/x-x509-ca-cert")
        #expect(certificate.contentType == "public.x509-certificate")
        let cartridge = typed("game.crt", "C64 CARTRIDGE   \0\0\0\u{40}")
        #expect(cartridge.mimeType == "application/x-commodore-crt")
        #expect(cartridge.contentType.hasPrefix("dyn."))
        #expect(cartridge.conformsTo.starts(with: ["public.data", "public.item"]))
    }

    @Test func proteinStructureStillReachesMoleculesAndAPalmDocumentDoesNot() {
        let protein = typed("1abc.pdb", "HEADER    PROTEIN                                 01-JAN-00   1ABC\n")
        #expect(protein.mimeType == "chemical/x-pdb")
        #expect(protein.contentType == "com.sunsetlakesoftware.molecules.pdb")
        let palm = engine.classify(filename: "aportis.pdb", head: Array(repeating: 0, count: 60) + Array("TEXtREAd".utf8) + [0, 0])
        #expect(palm.mimeType == "application/x-aportisdoc")
        #expect(palm.contentType != "com.sunsetlakesoftware.molecules.pdb")
    }

    @Test func officeOpenXMLIsNotPlainZip() {
        let document = engine.classify(filename: "sample.docx", head: Array("PK\u{03}\u{04}".utf8) + Array(repeating: 0, count: 26))
        #expect(document.mimeType == "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
        #expect(document.contentType == "org.openxmlformats.wordprocessingml.document")
        #expect(document.conformsTo.contains("public.data"))
    }

    @Test func heicIsReportedAsTheDetectedType() {
        let image = typed("example.heic", "\0\0\0\u{18}ftypheic")
        #expect(image.mimeType == "image/heif")
        #expect(image.contentType == "public.heif")
    }

    @Test func longestSuffixKeepsTheCompoundName() {
        let tarball = engine.classify(filename: "backup.tar.gz", head: [0x1F, 0x8B, 8, 0])
        #expect(tarball.mimeType == "application/x-compressed-tar")
        #expect(tarball.innerContentType == "public.tar-archive")
        #expect(tarball.extensionChain == ".tar.gz")
    }

    @Test func caseSensitiveGlobsAsTheToolWritesThem() {
        // update-mime-database repeats each case-sensitive glob without its flag, for old readers.
        #expect(typed("core", "x\n").mimeType == "application/x-core")
        #expect(typed("CORE", "x\n").mimeType == "text/plain")
        #expect(typed("main.c", "int main(void) { }\n").mimeType == "text/x-csrc")
        #expect(typed("main.C", "int main(void) { }\n").mimeType == "text/x-c++src")
    }
}
