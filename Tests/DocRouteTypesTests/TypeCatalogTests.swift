import Testing
@testable import DocRouteTypes

@Suite struct TypeCatalogTests {
    let system = TypeCatalog.system

    @Test func loadsEveryAppleDeclarationPlusAdditions() {
        #expect(system.count >= 876)
        #expect(system.contains("public.item"))
        #expect(system.contains("org.gnu.gnu-zip-archive"))
        #expect(system.contains("net.daringfireball.markdown"))
        #expect(system.issues.isEmpty, "\(system.issues)")
    }

    @Test func ancestorsAreNearestFirstAcrossSeveralParents() {
        // public.plain-text -> public.text -> (public.data, public.content) -> public.item
        #expect(system.ancestors(of: "public.plain-text") == ["public.text", "public.data", "public.content", "public.item"])
        // gzip has two parents: public.data and public.archive.
        let gzip = system.ancestors(of: "org.gnu.gnu-zip-archive")
        #expect(Array(gzip.prefix(2)) == ["public.data", "public.archive"])
        #expect(gzip.contains("public.item"))
        #expect(Set(gzip).count == gzip.count, "no ancestor twice")
    }

    @Test func physicalConformanceComesLastAndReachesSelection() throws {
        // public.message declares no parent; a file of it is still data (Apple's physical conformance).
        #expect(system.ancestors(of: "com.apple.mail.email") == ["public.email-message", "public.message", "public.data", "public.item"])
        var builder = TypeCatalogBuilder.withSystemTypes()
        builder.add(TypeDeclaration(identifier: "com.example.story", conformsTo: ["public.content"], filenameExtensions: ["story"],
                                    origin: .exported(bundleIdentifier: "com.example.reader")))
        let catalog = builder.build()
        #expect(catalog.conformanceChain(of: "com.example.story") == ["com.example.story", "public.content", "public.data", "public.item"])
        // Selection walks handles: the same chain.
        let index = try #require(catalog.typeIndex(of: "com.example.story"))
        #expect(catalog.ancestorIndexes(ofTypeAt: index).map { catalog.identifier(ofTypeAt: $0) } == ["public.content", "public.data", "public.item"])
        // Folders and packages are directories, never data.
        #expect(system.ancestors(of: "public.folder") == ["public.directory", "public.item"])
        #expect(!system.conforms("com.apple.rtfd", to: "public.data"))
        #expect(system.ancestors(of: "public.data") == ["public.item"])
        #expect(system.ancestors(of: "public.item").isEmpty)
    }

    @Test func conformanceIsCaseInsensitiveAndReflexive() {
        #expect(system.conforms("PUBLIC.PNG", to: "public.image"))
        #expect(system.conforms("public.png", to: "public.png"))
        #expect(!system.conforms("public.png", to: "public.text"))
    }

    @Test func tagsAreCaseInsensitiveAndIgnoreMIMEParameters() {
        #expect(system.preferredType(forFilenameExtension: "PDF") == "com.adobe.pdf")
        #expect(system.preferredType(forMIMEType: "Text/Plain; charset=utf-8") == "public.plain-text")
        // Apple's table lists public.xml before Word's XML format for "xml": the first declaration wins.
        #expect(system.preferredType(forFilenameExtension: "xml") == "public.xml")
        #expect(system.preferredMIMEType(for: "public.png") == "image/png")
    }

    @Test func cyclesAreReportedAndBrokenNeverLoopedOn() {
        var builder = TypeCatalogBuilder.withSystemTypes()
        builder.add(TypeDeclaration(identifier: "com.example.a", conformsTo: ["com.example.b"], origin: .exported(bundleIdentifier: "x")), file: "a.plist", keyPath: "UTExportedTypeDeclarations[0]")
        builder.add(TypeDeclaration(identifier: "com.example.b", conformsTo: ["com.example.c", "public.data"], origin: .exported(bundleIdentifier: "x")), file: "a.plist", keyPath: "UTExportedTypeDeclarations[1]")
        builder.add(TypeDeclaration(identifier: "com.example.c", conformsTo: ["com.example.a"], origin: .exported(bundleIdentifier: "x")), file: "a.plist", keyPath: "UTExportedTypeDeclarations[2]")
        let catalog = builder.build()
        let cycles = catalog.issues.filter { $0.code == .conformanceCycle }
        #expect(cycles.count == 1)
        #expect(cycles.first?.inputFile == "a.plist")
        #expect(catalog.ancestors(of: "com.example.a").starts(with: ["com.example.b"]))
        #expect(catalog.ancestors(of: "com.example.a").contains("public.item"))
        #expect(!catalog.ancestors(of: "com.example.a").contains("com.example.a"))
    }

    @Test func anUnknownParentStaysANameAndIsReportedWithItsKeyPath() {
        var builder = TypeCatalogBuilder.withSystemTypes()
        builder.add(TypeDeclaration(identifier: "com.example.orphan", conformsTo: ["public.data", "com.example.nowhere"], filenameExtensions: ["orph"], origin: .exported(bundleIdentifier: "x")), file: "h.plist", keyPath: "UTExportedTypeDeclarations[3]")
        builder.add(TypeDeclaration(identifier: "com.example.child", conformsTo: ["com.example.orphan"], origin: .exported(bundleIdentifier: "x")), file: "h.plist", keyPath: "UTExportedTypeDeclarations[4]")
        builder.add(TypeDeclaration(identifier: "com.example.sibling", conformsTo: ["com.example.NOWHERE", "not a type"], origin: .imported(bundleIdentifier: "y")), file: "i.plist", keyPath: "UTImportedTypeDeclarations[0]")
        let catalog = builder.build()
        #expect(catalog.preferredType(forFilenameExtension: "orph") == "com.example.orphan")
        #expect(catalog.conforms("com.example.orphan", to: "com.example.nowhere"))
        #expect(catalog.conforms("com.example.orphan", to: "public.data"))
        #expect(catalog.conforms("com.example.child", to: "com.example.nowhere"), "a child of the type keeps the name too")
        #expect(catalog.conforms("com.example.sibling", to: "com.example.nowhere"), "one entry for the name, whatever its case")
        #expect(catalog.declaration(for: "com.example.nowhere")?.origin == .imported(bundleIdentifier: "x"))
        let unknown = catalog.issues.filter { $0.code == .unknownParent }
        #expect(unknown.map(\.inputKey) == ["UTExportedTypeDeclarations[3].UTTypeConformsTo[1]", "UTImportedTypeDeclarations[0].UTTypeConformsTo[0]"])
        #expect(unknown.first?.description.contains("com.example.nowhere") == true)
        #expect(catalog.issues.contains { $0.code == .invalidValue && $0.inputKey == "UTImportedTypeDeclarations[0].UTTypeConformsTo[1]" })
    }

    @Test func exportedOutranksImportedWhicheverComesFirst() {
        var builder = TypeCatalogBuilder.withSystemTypes()
        builder.add(TypeDeclaration(identifier: "com.example.pdb", conformsTo: ["public.data"], filenameExtensions: ["xpdb"], origin: .imported(bundleIdentifier: "b")))
        builder.add(TypeDeclaration(identifier: "com.example.pdb", conformsTo: ["public.plain-text"], filenameExtensions: ["pdb"], origin: .exported(bundleIdentifier: "a")))
        builder.add(TypeDeclaration(identifier: "com.example.pdb", conformsTo: ["public.image"], origin: .imported(bundleIdentifier: "c")))
        let catalog = builder.build()
        #expect(catalog.declaration(for: "com.example.pdb")?.origin == .exported(bundleIdentifier: "a"))
        #expect(catalog.conforms("com.example.pdb", to: "public.text"))
        #expect(catalog.preferredType(forFilenameExtension: "xpdb") == nil)
    }

    @Test func handlersMayNotRedefinePublicTypes() {
        var builder = TypeCatalogBuilder.withSystemTypes()
        builder.add(TypeDeclaration(identifier: "public.text", conformsTo: ["public.image"], origin: .exported(bundleIdentifier: "evil")), file: "evil.plist", keyPath: "UTExportedTypeDeclarations[0]")
        builder.add(TypeDeclaration(identifier: "public.png", origin: .imported(bundleIdentifier: "fine")))
        let catalog = builder.build()
        #expect(catalog.declaration(for: "public.text")?.origin == .system)
        #expect(!catalog.conforms("public.text", to: "public.image"))
        #expect(catalog.issues.map(\.code) == [.systemTypeRedefined])
    }

    @Test func invalidIdentifiersAreReported() {
        var builder = TypeCatalogBuilder()
        builder.add(TypeDeclaration(identifier: ""), file: "f.plist", keyPath: "UTExportedTypeDeclarations[0]")
        builder.add(TypeDeclaration(identifier: "dyn.ah62d4rv4ge81a3dc"), file: "f.plist", keyPath: "UTExportedTypeDeclarations[1]")
        builder.add(TypeDeclaration(identifier: "has space"), file: "f.plist", keyPath: "UTExportedTypeDeclarations[2]")
        #expect(builder.issues.map(\.code) == [.missingIdentifier, .invalidValue, .invalidValue])
        #expect(builder.build().count == 0)
    }

    @Test func propertyListDeclarationReportsBadValuesWithKeyPaths() {
        var issues: [TypeCatalogIssue] = []
        let entry: [String: Any] = [
            "UTTypeIdentifier": "com.sunsetlakesoftware.molecules.pdb",
            "UTTypeConformsTo": ["public.plain-text", "public.text"],
            "UTTypeTagSpecification": ["public.filename-extension": ["pdb", 42], "public.mime-type": "chemical/x-pdb"],
        ]
        let declaration = TypeDeclaration.fromPropertyList(entry, origin: .exported(bundleIdentifier: "m"), file: "m.plist", keyPath: "UTExportedTypeDeclarations[0]", issues: &issues)
        #expect(declaration?.filenameExtensions == ["pdb"])
        #expect(declaration?.mimeTypes == ["chemical/x-pdb"])
        #expect(issues.map(\.inputKey) == ["UTExportedTypeDeclarations[0].UTTypeTagSpecification.public.filename-extension[1]"])

        issues = []
        #expect(TypeDeclaration.fromPropertyList(["UTTypeConformsTo": ["public.data"]], origin: .system, file: "m.plist", keyPath: "UTImportedTypeDeclarations[2]", issues: &issues) == nil)
        #expect(issues.first?.code == .missingIdentifier)
        #expect(issues.first?.inputKey == "UTImportedTypeDeclarations[2].UTTypeIdentifier")
    }
}
