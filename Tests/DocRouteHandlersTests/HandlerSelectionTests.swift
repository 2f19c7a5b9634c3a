import DocRouteTypes
import Foundation
import Logging
import Testing
@testable import DocRouteHandlers

@Suite struct HandlerSelectionTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    func registry(_ build: (ManifestFixtures) throws -> Void) throws -> HandlerRegistry {
        let fixtures = try ManifestFixtures()
        defer { fixtures.remove() }
        try build(fixtures)
        return HandlerDirectory(path: fixtures.directory).load(logger: logger)
    }

    @Test func shippedSamplesLoadAndRouteAsTheirCommentsSay() throws {
        let registry = try registry { try $0.copySamples() }
        #expect(registry.failures.isEmpty, "\(registry.failures)")
        #expect(registry.typeIssues.isEmpty, "\(registry.typeIssues)")
        let selector = HandlerSelector(registry: registry)
        let catalog = registry.catalog
        func route(_ name: String) -> String? {
            let match = catalog.match(filename: name)
            return selector.select(contentType: match.contentType ?? "public.data", innerContentType: match.innerContentType).bundleIdentifier
        }
        #expect(route("1abc.pdb") == "com.sunsetlakesoftware.molecules")
        #expect(route("1abc.pdb.gz") == "com.sunsetlakesoftware.molecules")
        #expect(route("plain.gz") == "com.sunsetlakesoftware.molecules", "Owner rank beats Default")
        #expect(route("bundle.tar.gz") == "org.docroute.archiver", "claims the inner tar type")
        #expect(route("readme.txt") == "org.docroute.textviewer")
        #expect(route("notes.md") == "org.docroute.textviewer")
        #expect(route("paper.pdf") == "org.docroute.pdfviewer", "legacy CFBundleTypeExtensions")
        #expect(route("photo.jpeg") == "org.docroute.pdfviewer", "legacy CFBundleTypeMIMETypes")
        #expect(route("movie.mov") == nil)
        #expect(selector.select(scheme: "TODOLIST").bundleIdentifier == "com.acme.todolist")
        // The exported declaration (conforms to plain-text and text) wins over textviewer's import.
        #expect(catalog.declaration(for: "com.sunsetlakesoftware.molecules.pdb")?.origin == .exported(bundleIdentifier: "com.sunsetlakesoftware.molecules"))
    }

    @Test(arguments: [false, true])
    func mostSpecificClaimedTypeWins(binary: Bool) throws {
        let registry = try registry {
            try $0.write("a.plist", ManifestFixtures.handler("com.example.anything", types: [ManifestFixtures.claim(["public.data"], rank: "Owner", role: "Editor")]), binary: binary)
            try $0.write("b.plist", ManifestFixtures.handler("com.example.images", types: [ManifestFixtures.claim(["public.image"], rank: "Alternate", role: "Shell")]), binary: binary)
        }
        let selector = HandlerSelector(registry: registry)
        let selection = selector.select(contentType: "public.png")
        #expect(selection.bundleIdentifier == "com.example.images")
        #expect(selection.candidates.map(\.matchedType) == ["public.image"])
        #expect(selector.select(contentType: "com.adobe.pdf").bundleIdentifier == "com.example.anything")
    }

    @Test func rankThenRoleThenIdentifier() throws {
        let registry = try registry {
            try $0.write("1.plist", ManifestFixtures.handler("com.example.z-default-viewer", types: [ManifestFixtures.claim(["public.png"], rank: nil, role: "Viewer")]))
            try $0.write("2.plist", ManifestFixtures.handler("com.example.y-alternate-editor", types: [ManifestFixtures.claim(["public.png"], rank: "Alternate", role: "Editor")]))
            try $0.write("3.plist", ManifestFixtures.handler("com.example.x-default-editor", types: [ManifestFixtures.claim(["public.png"], rank: "Default", role: "Editor")]), binary: true)
            try $0.write("4.plist", ManifestFixtures.handler("com.example.w-none", types: [ManifestFixtures.claim(["public.png"], rank: "None", role: "Editor")]))
            try $0.write("5.plist", ManifestFixtures.handler("com.example.a-default-editor", types: [ManifestFixtures.claim(["public.png"], rank: "Default", role: "Editor")]))
            try $0.write("6.plist", ManifestFixtures.handler("com.example.b-role-none", types: [ManifestFixtures.claim(["public.png"], rank: "Owner", role: "None")]))
            try $0.write("7.plist", ManifestFixtures.handler("com.example.c-default-shell", types: [ManifestFixtures.claim(["public.png"], rank: "Default", role: "Shell")]))
        }
        let selection = HandlerSelector(registry: registry).select(contentType: "public.png")
        #expect(selection.candidates.map(\.bundleIdentifier) == [
            "com.example.a-default-editor", "com.example.x-default-editor", "com.example.z-default-viewer",
            "com.example.c-default-shell", "com.example.y-alternate-editor",
        ])
        #expect(selection.reason.contains("bundle identifier order"))
    }

    /// Exporting a type's declaration decides what the type is, never who opens it.
    @Test(arguments: [false, true])
    func exportingTheTypePlaysNoPartInChoosingAHandler(binary: Bool) throws {
        let registry = try registry {
            try $0.write("owner.plist", ManifestFixtures.handler("com.example.owner", types: [ManifestFixtures.claim(["com.example.doc"], rank: "Owner")], extra: [
                "UTExportedTypeDeclarations": [["UTTypeIdentifier": "com.example.doc", "UTTypeConformsTo": ["public.data"], "UTTypeTagSpecification": ["public.filename-extension": "exdoc"]]],
            ]), binary: binary)
            try $0.write("exporter.plist", ManifestFixtures.handler("com.example.b-exporter", types: [ManifestFixtures.claim(["com.example.doc2"], role: "Viewer")], extra: [
                "UTExportedTypeDeclarations": [["UTTypeIdentifier": "com.example.doc2", "UTTypeConformsTo": ["public.data"], "UTTypeTagSpecification": ["public.filename-extension": ["exdoc2"]]]],
            ]), binary: binary)
            try $0.write("importer.plist", ManifestFixtures.handler("com.example.a-importer", types: [ManifestFixtures.claim(["com.example.doc", "com.example.doc2"], role: "Editor")], extra: [
                "UTImportedTypeDeclarations": [["UTTypeIdentifier": "com.example.doc2", "UTTypeConformsTo": ["public.image"], "UTTypeTagSpecification": ["public.filename-extension": ["imported"]]]],
            ]), binary: binary)
            try $0.write("viewer.plist", ManifestFixtures.handler("com.example.c-viewer", types: [ManifestFixtures.claim(["com.example.doc2"], role: "Viewer")]), binary: binary)
        }
        let selector = HandlerSelector(registry: registry)
        #expect(selector.select(contentType: "com.example.doc").bundleIdentifier == "com.example.owner", "rank Owner")
        let selection = selector.select(contentType: "com.example.doc2")
        #expect(selection.candidates.map(\.bundleIdentifier) == ["com.example.a-importer", "com.example.b-exporter", "com.example.c-viewer"])
        #expect(selection.reason.contains("role Editor beats Viewer"), "\(selection.reason)")
        #expect(selector.chooseHandler(contentType: "com.example.doc2")?.bundleIdentifier == "com.example.a-importer")
        // The exported declaration is still the type's definition: its tags and parents.
        #expect(registry.catalog.preferredType(forFilenameExtension: "exdoc") == "com.example.doc")
        #expect(registry.catalog.preferredType(forFilenameExtension: "exdoc2") == "com.example.doc2")
        #expect(registry.catalog.preferredType(forFilenameExtension: "imported") == nil)
        #expect(!registry.catalog.conforms("com.example.doc2", to: "public.image"))
        // Between two Viewers of Default rank, the exporter is first only by bundle identifier.
        let viewers = selection.candidates.dropFirst()
        #expect(viewers.map(\.bundleIdentifier) == ["com.example.b-exporter", "com.example.c-viewer"])
    }

    @Test func adminDefaultWinsOverRank() throws {
        let registry = try registry {
            try $0.write("a.plist", ManifestFixtures.handler("com.example.owner", types: [ManifestFixtures.claim(["public.plain-text"], rank: "Owner")]))
            try $0.write("b.plist", ManifestFixtures.handler("com.example.chosen", types: [ManifestFixtures.claim(["public.plain-text"], rank: "Alternate")], schemes: ["notes"]))
            try $0.write("c.plist", ManifestFixtures.handler("com.example.other", schemes: ["Notes"]))
        }
        let defaults = AdminDefaults(types: ["public.plain-text": "com.example.chosen"], schemes: ["notes": "com.example.other"])
        let selector = HandlerSelector(registry: registry, defaults: defaults)
        #expect(selector.select(contentType: "public.plain-text").bundleIdentifier == "com.example.chosen")
        #expect(selector.chooseHandler(contentType: "public.plain-text")?.bundleIdentifier == "com.example.chosen")
        #expect(selector.select(scheme: "NOTES").bundleIdentifier == "com.example.other")
        #expect(HandlerSelector(registry: registry).select(scheme: "notes").bundleIdentifier == "com.example.chosen", "bundle identifier order without a default")
    }

    @Test func compoundFilesPreferHandlersClaimingTheInnerType() throws {
        let registry = try registry { try $0.copySamples() }
        let selector = HandlerSelector(registry: registry)
        let selection = selector.select(contentType: "org.gnu.gnu-zip-archive", innerContentType: "public.tar-archive")
        #expect(selection.candidates.map(\.bundleIdentifier) == ["org.docroute.archiver", "com.sunsetlakesoftware.molecules"])
        #expect(selection.reason.contains("inner type"))
        #expect(selector.chooseHandler(contentType: "org.gnu.gnu-zip-archive", innerContentType: "public.tar-archive")?.bundleIdentifier == "org.docroute.archiver")
    }

    @Test func chooseAndSelectAgree() throws {
        let registry = try registry { try $0.copySamples() }
        let selector = HandlerSelector(registry: registry)
        for type in ["public.png", "com.adobe.pdf", "public.plain-text", "com.sunsetlakesoftware.molecules.pdb", "public.movie", "org.gnu.gnu-zip-archive"] {
            #expect(selector.chooseHandler(contentType: type)?.bundleIdentifier == selector.select(contentType: type).bundleIdentifier, "\(type)")
        }
    }

    /// The slow path (dynamic types, inner types, administrators' defaults) remembers its winners
    /// by type: asked again, and for more types than the memo holds, it still answers as `select`.
    @Test func rememberedChoicesAgreeWithSelect() throws {
        let registry = try registry { try $0.copySamples() }
        let defaults = AdminDefaults(types: ["public.text": "com.sunsetlakesoftware.molecules"])
        let catalog = registry.catalog
        for selector in [HandlerSelector(registry: registry), HandlerSelector(registry: registry, defaults: defaults)] {
            let dynamicTypes = (0..<5_000).map {
                DynamicTypeIdentifier(tagClass: .filenameExtension, tag: "x\($0)").identifier
            } + [DynamicTypeIdentifier(tagClass: .mimeType, tag: "text/x-made-up", conformingTo: "public.plain-text").identifier]
            for round in 0..<2 {
                for type in dynamicTypes + ["public.plain-text", "com.adobe.pdf", "public.png"] {
                    #expect(selector.chooseHandler(contentType: type)?.bundleIdentifier == selector.select(contentType: type).bundleIdentifier,
                            "\(type), round \(round)")
                }
                #expect(selector.chooseHandler(contentType: "org.gnu.gnu-zip-archive", innerContentType: "public.tar-archive")?.bundleIdentifier
                        == selector.select(contentType: "org.gnu.gnu-zip-archive", innerContentType: "public.tar-archive").bundleIdentifier)
            }
            #expect(catalog.ancestors(of: dynamicTypes.last!).first == "public.plain-text")
        }
    }

    /// A default for a type the document conforms to decides when its handler claims only a more
    /// general type; only the nearest default counts, and one whose handler cannot open the
    /// document is passed over, with the reason.
    @Test func theNearestDefaultDecidesWheneverItsHandlerCanOpenTheDocument() throws {
        let registry = try registry {
            try $0.write("a.plist", ManifestFixtures.handler("com.example.pdf", types: [ManifestFixtures.claim(["com.adobe.pdf"], rank: "Owner")]))
            try $0.write("b.plist", ManifestFixtures.handler("com.example.hex", types: [ManifestFixtures.claim(["public.data"], rank: "Alternate")]))
            try $0.write("c.plist", ManifestFixtures.handler("com.example.text", types: [ManifestFixtures.claim(["public.plain-text"])]))
        }
        let hex = HandlerSelector(registry: registry, defaults: AdminDefaults(types: ["public.data": "com.example.hex"]))
        for selector in [hex, HandlerSelector(registry: registry, defaults: AdminDefaults(types: ["com.adobe.pdf": "com.example.hex"]))] {
            let selection = selector.select(contentType: "com.adobe.pdf")
            #expect(selection.bundleIdentifier == "com.example.hex")
            #expect(selection.adminDefault?.decided == true)
            #expect(selection.candidates.map(\.bundleIdentifier) == ["com.example.hex", "com.example.pdf"])
            #expect(selector.chooseHandler(contentType: "com.adobe.pdf")?.bundleIdentifier == "com.example.hex")
            #expect(selector.openInCandidates(contentType: "com.adobe.pdf").first?.isAdminDefault == true)
        }
        #expect(hex.select(contentType: "com.adobe.pdf").reason.contains("the nearest type com.adobe.pdf conforms to that has one"))

        // The nearest default names a handler that cannot open PDFs: passed over, and the farther
        // public.data default does not step in.
        let passed = HandlerSelector(registry: registry, defaults: AdminDefaults(types: ["com.adobe.pdf": "com.example.text", "public.data": "com.example.hex"]))
        let selection = passed.select(contentType: "com.adobe.pdf")
        #expect(selection.bundleIdentifier == "com.example.pdf")
        #expect(passed.chooseHandler(contentType: "com.adobe.pdf")?.bundleIdentifier == "com.example.pdf")
        #expect(selection.adminDefault == AdminDefaultDecision(
            key: "com.adobe.pdf", bundleIdentifier: "com.example.text", decided: false,
            passedOverReason: "it claims neither com.adobe.pdf nor any type it conforms to (it claims public.plain-text)"))
        #expect(selection.reason.contains("was passed over"), "\(selection.reason)")
    }

    /// Of two manifests with one bundle identifier, the one loaded before keeps serving; with
    /// none loaded before, both are refused.
    @Test func aDuplicateIdentifierKeepsTheManifestLoadedBefore() throws {
        let fixtures = try ManifestFixtures()
        defer { fixtures.remove() }
        let manifest = ManifestFixtures.handler("com.example.viewer", types: [ManifestFixtures.claim(["public.png"])])
        try fixtures.write("a.plist", manifest)
        try fixtures.write("b.plist", manifest)
        let directory = HandlerDirectory(path: fixtures.directory)
        let first = directory.load(logger: logger)
        #expect(first.handlers.isEmpty)
        #expect(first.failures.map(\.error.code) == [.duplicateIdentifier, .duplicateIdentifier])
        let kept = directory.load(logger: logger, previouslyLoaded: ["com.example.viewer": fixtures.directory + "/b.plist"])
        #expect(kept.handler(for: "com.example.viewer")?.manifest.file == fixtures.directory + "/b.plist")
        #expect(kept.failures.map(\.file) == [fixtures.directory + "/a.plist"])
        #expect(kept.warnings.map(\.code) == [.duplicateIdentifier])
        #expect(kept.loadedFiles == ["com.example.viewer": fixtures.directory + "/b.plist"])
    }
}
