import Foundation
import Testing
@testable import DocRouteTypes

@Suite struct TypeEngineTests {
    static let engine: TypeEngine = {
        var builder = TypeCatalogBuilder.withSystemTypes()
        builder.add(TypeDeclaration(
            identifier: "com.sunsetlakesoftware.molecules.pdb", conformsTo: ["public.plain-text", "public.text"],
            filenameExtensions: ["pdb"], mimeTypes: ["chemical/x-pdb"], origin: .exported(bundleIdentifier: "com.sunsetlakesoftware.molecules")))
        // A handler's type with an extension and no MIME type: only the catalog knows the name.
        builder.add(TypeDeclaration(
            identifier: "com.example.note", conformsTo: ["public.plain-text"], filenameExtensions: ["xnote"],
            origin: .exported(bundleIdentifier: "com.example.notes")))
        // A handler's type with a MIME type shared-mime-info does not know.
        builder.add(TypeDeclaration(
            identifier: "com.example.bundle", conformsTo: ["public.zip-archive"], filenameExtensions: ["exb"],
            mimeTypes: ["application/x-example-bundle"], origin: .exported(bundleIdentifier: "com.example.bundler")))
        return TypeEngine(catalog: builder.build(), mimeDatabase: .loadSystemOrBuiltin())
    }()
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52] + Array(repeating: 0, count: 32)

    @Test func extensionDecidesAndHandlerMIMEIsKept() {
        let result = Self.engine.classify(filename: "1abc.pdb", head: Array("HEADER x\n".utf8))
        #expect(result.contentType == "com.sunsetlakesoftware.molecules.pdb")
        #expect(result.decidedBy == .extension)
        #expect(result.mimeType == "chemical/x-pdb")
        #expect(result.conformsTo.starts(with: ["public.plain-text", "public.text"]))
    }

    @Test func anUnambiguousNameIsFinalAsTheSpecSays() {
        // One glob, one type: shared-mime-info and GLib never read the content, nor does docroute.
        let result = Self.engine.classify(filename: "report.pdf", head: Self.png)
        #expect(result.contentType == "com.adobe.pdf")
        #expect(result.decidedBy == .extension)
        #expect(result.mimeType == "application/pdf")
    }

    @Test func contentContradictingANameOnlyTheCatalogKnowsWins() {
        // `.xnote` is a handler's, without a MIME type: the name decides, unless PNG magic says otherwise.
        let note = Self.engine.classify(filename: "letter.xnote", head: Array("Dear all,\n".utf8))
        #expect(note.contentType == "com.example.note")
        #expect(note.decidedBy == .extension)
        #expect(note.mimeType == "text/plain")
        let result = Self.engine.classify(filename: "letter.xnote", head: Self.png)
        #expect(result.contentType == "public.png")
        #expect(result.decidedBy == .content)
        #expect(result.mimeType == "image/png")
    }

    @Test func aNameThatSaysNothingIsTypedFromItsBytes() {
        #expect(Self.engine.classify(filename: "picture", head: Self.png).contentType == "public.png")
        #expect(Self.engine.classify(filename: nil, head: Array("%PDF-1.7\n".utf8)).contentType == "com.adobe.pdf")
        let text = Self.engine.classify(filename: "notes", head: Array("plain words\n".utf8))
        #expect(text.contentType == "public.plain-text")
        #expect(text.decidedBy == .content)
        // shared-mime-info knows README* as text/x-readme, which no UTI claims: a dyn. type under plain text.
        let readme = Self.engine.classify(filename: "README", head: Array("plain words\n".utf8))
        #expect(readme.contentType.hasPrefix("dyn.a"))
        #expect(readme.conformsTo.first == "public.plain-text")
        let binary = Self.engine.classify(filename: "blob", head: [0, 1, 2, 3, 0xFF, 0xFE])
        #expect(binary.contentType == "public.data")
        #expect(binary.decidedBy == .content)
    }

    @Test func unknownExtensionGetsAppleDynamicIdentifier() {
        let result = Self.engine.classify(filename: "data.zzqx", head: [0, 1, 2, 0xFF])
        #expect(result.contentType == DynamicTypeIdentifier(tagClass: .filenameExtension, tag: "zzqx").identifier)
        #expect(result.decidedBy == .dynamic)
        #expect(result.conformsTo == ["public.data", "public.item"])
        #expect(result.extensionChain == ".zzqx")
    }

    @Test func mimeHintFromMailIsUsedWhenTheNameSaysNothing() {
        let result = Self.engine.classify(filename: "attachment", head: Array("HEADER\n".utf8), mimeHint: "Chemical/X-PDB; name=1abc")
        #expect(result.contentType == "com.sunsetlakesoftware.molecules.pdb")
        #expect(result.decidedBy == .mime)
        // A MIME type nobody declares becomes a dyn. identifier under its nearest claimed parent.
        let unknown = Self.engine.classify(filename: "x", head: Array("a\n".utf8), mimeHint: "text/x-nobody-knows")
        #expect(unknown.contentType.hasPrefix("dyn.a"))
        #expect(unknown.conformsTo.contains("public.text"))
    }

    @Test func compoundNamesReportTheInnerType() {
        let result = Self.engine.classify(filename: "1abc.pdb.gz", head: [0x1F, 0x8B, 8, 0, 0, 0, 0, 0])
        #expect(result.contentType == "org.gnu.gnu-zip-archive")
        #expect(result.innerContentType == "com.sunsetlakesoftware.molecules.pdb")
        #expect(result.extensionChain == ".pdb.gz")
        let tar = Self.engine.classify(filename: "backup.tgz", head: [0x1F, 0x8B, 8, 0])
        #expect(tar.innerContentType == "public.tar-archive")
    }

    @Test func exportedTypesTakePartAsGlobsWithTheirParents() {
        let zip = Array("PK\u{03}\u{04}".utf8) + Array(repeating: 0, count: 26)
        let bundle = Self.engine.classify(filename: "Q3.EXB", head: zip)
        #expect(bundle.mimeType == "application/x-example-bundle")
        #expect(bundle.contentType == "com.example.bundle")
        #expect(bundle.decidedBy == .extension)
        #expect(Self.engine.mimeDatabase.globMatches(filename: "a.exb").map(\.type) == ["application/x-example-bundle"])
        // Its declared parent's MIME type becomes its sub-class-of.
        #expect(Self.engine.mimeDatabase.isSubclass("application/x-example-bundle", of: "application/zip"))
        // The handler's chemical/x-pdb joins the name's other candidates; the database itself is untouched.
        #expect(Self.engine.mimeDatabase.globMatches(filename: "1abc.pdb").contains { $0.type == "chemical/x-pdb" })
        #expect(MIMEDatabase.loadSystemOrBuiltin().globMatches(filename: "a.exb").isEmpty)
    }

    @Test func everyFileIsDataAndAnItemMostSpecificFirst() {
        // The mail drop delivers attached messages as `.eml` with their Content-Type.
        let mail = Self.engine.classify(filename: "x.eml", head: Array("From: a@example.org\nSubject: hi\n\nbody\n".utf8),
                                        mimeHint: "message/rfc822")
        #expect(mail.contentType == "com.apple.mail.email")
        #expect(mail.mimeType == "message/rfc822")
        #expect(mail.conformsTo.contains("public.data"))
        #expect(mail.conformsTo.suffix(2) == ["public.data", "public.item"])
        #expect(Self.engine.catalog.conformanceChain(of: "com.apple.mail.email").contains("public.data"))
        let note = Self.engine.classify(filename: "letter.xnote", head: Array("Dear all,\n".utf8))
        #expect(note.conformsTo.first == "public.plain-text")
        #expect(note.conformsTo.contains("public.data"))
    }

    @Test func foldersAreDirectoriesAndPackagesKeepTheirType() {
        let folder = Self.engine.classify(directoryNamed: "Holiday photos")
        #expect(folder.contentType == "public.folder")
        #expect(folder.conformsTo == ["public.directory", "public.item"])
        let package = Self.engine.classify(directoryNamed: "Report.rtfd")
        #expect(package.contentType == "com.apple.rtfd")
        #expect(package.conformsTo.contains("public.directory"))
        #expect(!package.conformsTo.contains("public.data"))
    }

    @Test func nameOnlyFastPathAgreesWithTheFullPath() {
        for name in ["a.pdf", "b.PNG", "1abc.pdb.gz", "notes.md", "x.tar.xz"] {
            let fast = Self.engine.classify(filename: name)
            let full = Self.engine.classify(filename: name, head: [])
            #expect(fast.contentType == full.contentType, "\(name)")
            #expect(fast.innerContentType == full.innerContentType, "\(name)")
        }
    }
}

private enum CorpusTools {
    static let present = FileManager.default.isExecutableFile(atPath: "/usr/bin/gio")
        && FileManager.default.fileExists(atPath: "/usr/share/mime/globs2")
}

/// Types real files gathered from this machine and compares the MIME type with what GLib's
/// shared-mime-info implementation says (`gio info`). Agreement must stay at 95% or more.
@Suite(.enabled(if: CorpusTools.present, "gio (libglib2.0-bin) or shared-mime-info is not installed; `make deps` installs both"))
struct TypeEngineCorpusTests {
    @Test func agreesWithGioOnRealFiles() throws {
        let engine = TypeEngine(catalog: .system, mimeDatabase: .loadSystemOrBuiltin())
        var files: [String] = []
        for root in ["/usr/share/doc", "/usr/share/pixmaps", "/usr/share/icons", "/usr/share/perl5", "/usr/bin", "/usr/share/common-licenses", "/usr/share/man/man1", "/usr/share/xml", "/usr/share/mime/packages", "/usr/lib/python3"] {
            guard let walker = FileManager.default.enumerator(atPath: root) else { continue }
            var taken = 0
            while let relative = walker.nextObject() as? String, taken < 80 {
                let path = root + "/" + relative
                var info = stat()
                guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, access(path, R_OK) == 0 else { continue }
                files.append(path)
                taken += 1
            }
        }
        try #require(files.count >= 100, "too few files to compare: \(files.count)")
        let gio = Process()
        gio.executableURL = URL(fileURLWithPath: "/usr/bin/gio")
        gio.arguments = ["info", "-a", "standard::content-type"] + files
        let pipe = Pipe()
        gio.standardOutput = pipe
        gio.standardError = FileHandle.nullDevice
        try gio.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        gio.waitUntilExit()
        let reference = output.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "standard::content-type: ") else { return nil }
            return String(line[range.upperBound...])
        }
        try #require(reference.count == files.count, "gio answered for \(reference.count) of \(files.count) files")
        var agree = 0
        var disagreements: [String] = []
        for (path, expected) in zip(files, reference) {
            let handle = FileHandle(forReadingAtPath: path)
            let head = [UInt8](handle?.readData(ofLength: 4096) ?? Data())
            try? handle?.close()
            let result = engine.classify(filename: (path as NSString).lastPathComponent, head: head)
            if result.mimeType == expected { agree += 1 } else { disagreements.append("\(path): \(result.mimeType ?? "nil") vs gio \(expected)") }
        }
        let ratio = Double(agree) / Double(files.count)
        print("type engine vs gio: \(agree)/\(files.count) agree (\(String(format: "%.1f", ratio * 100))%)")
        for line in disagreements.prefix(10) { print("  \(line)") }
        #expect(ratio >= 0.95, "\(disagreements.prefix(20))")
    }
}
