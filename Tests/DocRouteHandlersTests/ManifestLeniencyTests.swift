import DocRouteTypes
import Foundation
import Logging
import Synchronization
import Testing
@testable import DocRouteHandlers

/// The rules of reading a manifest as Launch Services reads it, one at a time, each in XML and in
/// binary form: what can be used is used, and each liberty taken is a warning naming file and key path.
@Suite struct ManifestLeniencyTests {
    typealias Fixtures = ManifestFixtures

    func load(binary: Bool, _ manifests: [String: [String: Any]], logger: Logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })) throws -> HandlerRegistry {
        let fixtures = try ManifestFixtures()
        defer { fixtures.remove() }
        for (name, plist) in manifests { try fixtures.write(name, plist, binary: binary) }
        return HandlerDirectory(path: fixtures.directory).load(logger: logger)
    }

    static func summary(_ warnings: [ManifestWarning]) -> [String] {
        warnings.map { "\(($0.file as NSString).lastPathComponent) \($0.keyPath) \($0.code.rawValue)" }
    }

    @Test(arguments: [false, true])
    func anUnknownRoleOrRankSkipsThatDocumentTypeOnly(binary: Bool) throws {
        let registry = try load(binary: binary, ["app.plist": Fixtures.handler("com.example.app", types: [
            Fixtures.claim(["public.png"], role: "Viewer"),
            Fixtures.claim(["public.jpeg"], role: "QLGenerator"),
            Fixtures.claim(["public.tiff"], rank: "Boss", role: "Editor"),
            ["LSItemContentTypes": ["com.compuserve.gif"], "CFBundleTypeRole": 7],
            Fixtures.claim(["public.heic"], rank: "Primary", role: "Printer"),
            Fixtures.claim(["com.adobe.pdf"], rank: "alternate", role: "editor"),
        ])])
        #expect(registry.failures.isEmpty, "\(registry.failures)")
        let app = try #require(registry.handler(for: "com.example.app"))
        #expect(app.claims.map { "\($0.contentType) \($0.rank.rawValue) \($0.role.rawValue)" } == [
            "public.png Default Viewer", "com.adobe.pdf Alternate Editor",
        ], "names compare without case, as before")
        #expect(Self.summary(registry.warnings) == [
            "app.plist CFBundleDocumentTypes[1].CFBundleTypeRole unknown-role",
            "app.plist CFBundleDocumentTypes[2].LSHandlerRank unknown-rank",
            "app.plist CFBundleDocumentTypes[3].CFBundleTypeRole unknown-role",
            "app.plist CFBundleDocumentTypes[4].CFBundleTypeRole unknown-role",
            "app.plist CFBundleDocumentTypes[4].LSHandlerRank unknown-rank",
        ])
        #expect(registry.warnings[0].message.contains("'QLGenerator'") && registry.warnings[0].message.contains("Editor, Viewer, Shell or None"))
        #expect(registry.warnings[1].message.contains("'Boss'") && registry.warnings[1].message.contains("Owner, Default, Alternate or None"))
        #expect(registry.warnings[2].message.contains("a number"), "\(registry.warnings[2].message)")
        #expect(registry.warnings.allSatisfy { $0.message.contains("this document type is skipped") })
        let selector = HandlerSelector(registry: registry)
        #expect(selector.select(contentType: "public.jpeg").bundleIdentifier == nil)
        #expect(selector.select(contentType: "public.png").bundleIdentifier == "com.example.app")
    }

    @Test(arguments: [false, true])
    func aStringWhereAnArrayBelongsIsAOneElementArray(binary: Bool) throws {
        let registry = try load(binary: binary, [
            "strings.plist": [
                "CFBundleIdentifier": "com.example.strings",
                "CFBundleDocumentTypes": [
                    ["LSItemContentTypes": "com.example.doc", "CFBundleTypeRole": "Editor", "CFBundleTypeIconFiles": "doc.png"],
                    ["CFBundleTypeExtensions": "legacyext", "CFBundleTypeMIMETypes": "application/x-legacy", "CFBundleTypeRole": "Viewer"],
                ],
                "CFBundleURLTypes": [["CFBundleURLName": "strings", "CFBundleURLSchemes": "Strings-App"]],
                "UTExportedTypeDeclarations": [[
                    "UTTypeIdentifier": "com.example.doc", "UTTypeConformsTo": "public.xml",
                    "UTTypeTagSpecification": ["public.filename-extension": "exdoc", "public.mime-type": "application/x-exdoc"],
                ]],
            ],
            "single.plist": [
                "CFBundleIdentifier": "com.example.single",
                "CFBundleDocumentTypes": ["LSItemContentTypes": ["public.png"], "CFBundleTypeRole": "Viewer"],
                "UTImportedTypeDeclarations": ["UTTypeIdentifier": "com.example.other", "UTTypeConformsTo": ["public.data"]],
            ],
        ])
        #expect(registry.failures.isEmpty, "\(registry.failures)")
        let strings = try #require(registry.handler(for: "com.example.strings"))
        #expect(strings.claims.map(\.contentType) == [
            "com.example.doc",
            DynamicTypeIdentifier(tagClass: .filenameExtension, tag: "legacyext").identifier,
            DynamicTypeIdentifier(tagClass: .mimeType, tag: "application/x-legacy").identifier,
        ])
        #expect(strings.manifest.documentTypes.first?.iconFiles == ["doc.png"])
        #expect(strings.manifest.schemes == ["strings-app"])
        #expect(registry.catalog.preferredType(forFilenameExtension: "exdoc") == "com.example.doc")
        #expect(registry.catalog.preferredType(forMIMEType: "application/x-exdoc") == "com.example.doc")
        #expect(registry.catalog.conforms("com.example.doc", to: "public.xml"))
        let single = try #require(registry.handler(for: "com.example.single"))
        #expect(single.claims.map(\.contentType) == ["public.png"])
        #expect(registry.catalog.declaration(for: "com.example.other")?.origin == .imported(bundleIdentifier: "com.example.single"))
        #expect(Self.summary(registry.warnings) == [
            "single.plist CFBundleDocumentTypes one-element-array",
            "single.plist UTImportedTypeDeclarations one-element-array",
            "strings.plist CFBundleDocumentTypes[0].LSItemContentTypes one-element-array",
            "strings.plist CFBundleDocumentTypes[0].CFBundleTypeIconFiles one-element-array",
            "strings.plist CFBundleDocumentTypes[1].CFBundleTypeExtensions one-element-array",
            "strings.plist CFBundleDocumentTypes[1].CFBundleTypeMIMETypes one-element-array",
            "strings.plist CFBundleURLTypes[0].CFBundleURLSchemes one-element-array",
            "strings.plist UTExportedTypeDeclarations[0].UTTypeConformsTo one-element-array",
        ])
        #expect(registry.warnings.first { $0.keyPath.hasSuffix("LSItemContentTypes") }?.message.contains(#"["com.example.doc"]"#) == true)
    }

    @Test(arguments: [false, true])
    func whiteSpaceAroundValuesIsTrimmed(binary: Bool) throws {
        let registry = try load(binary: binary, ["spaced.plist": [
            "CFBundleIdentifier": "  com.example.spaced\n",
            "CFBundleDocumentTypes": [[
                "LSItemContentTypes": [" com.example.spaced-doc ", "\tpublic.png"], "CFBundleTypeRole": "Editor ", "LSHandlerRank": "\nOwner",
            ]],
            "CFBundleURLTypes": [["CFBundleURLSchemes": [" spaced "]]],
            "UTExportedTypeDeclarations": [[
                "UTTypeIdentifier": "com.example.spaced-doc\n", "UTTypeConformsTo": [" public.plain-text"],
                "UTTypeTagSpecification": ["public.filename-extension": ["spc "]],
            ]],
        ]])
        #expect(registry.failures.isEmpty, "\(registry.failures)")
        let handler = try #require(registry.handler(for: "com.example.spaced"))
        #expect(handler.bundleIdentifier == "com.example.spaced")
        #expect(handler.claims.map { "\($0.contentType) \($0.rank.rawValue) \($0.role.rawValue)" } == [
            "com.example.spaced-doc Owner Editor", "public.png Owner Editor",
        ])
        #expect(handler.manifest.schemes == ["spaced"])
        #expect(registry.catalog.match(filename: "notes.spc").contentType == "com.example.spaced-doc")
        #expect(registry.catalog.conforms("com.example.spaced-doc", to: "public.text"))
        #expect(Self.summary(registry.warnings) == [
            "spaced.plist CFBundleIdentifier whitespace-trimmed",
            "spaced.plist CFBundleDocumentTypes[0].CFBundleTypeRole whitespace-trimmed",
            "spaced.plist CFBundleDocumentTypes[0].LSHandlerRank whitespace-trimmed",
            "spaced.plist CFBundleDocumentTypes[0].LSItemContentTypes[0] whitespace-trimmed",
            "spaced.plist CFBundleDocumentTypes[0].LSItemContentTypes[1] whitespace-trimmed",
            "spaced.plist CFBundleURLTypes[0].CFBundleURLSchemes[0] whitespace-trimmed",
            "spaced.plist UTExportedTypeDeclarations[0].UTTypeIdentifier whitespace-trimmed",
            "spaced.plist UTExportedTypeDeclarations[0].UTTypeConformsTo[0] whitespace-trimmed",
            "spaced.plist UTExportedTypeDeclarations[0].UTTypeTagSpecification.public.filename-extension[0] whitespace-trimmed",
        ])
        #expect(registry.warnings[0].message.contains(#""  com.example.spaced\n""#) && registry.warnings[0].message.contains("'com.example.spaced'"),
                "\(registry.warnings[0].message)")
    }

    @Test(arguments: [false, true])
    func aParentNobodyDeclaresStaysANameTheTypeConformsTo(binary: Bool) throws {
        let registry = try load(binary: binary, [
            "torrent.plist": Fixtures.handler("org.example.torrent", types: [Fixtures.claim(["org.bittorrent.torrent"], rank: "Owner")], extra: [
                "UTExportedTypeDeclarations": [[
                    "UTTypeIdentifier": "org.bittorrent.torrent", "UTTypeConformsTo": ["com.bittorrent.torrent", "public.data"],
                    "UTTypeTagSpecification": ["public.filename-extension": ["torrent"]],
                ], [
                    "UTTypeIdentifier": "org.example.magnet-list", "UTTypeConformsTo": ["org.bittorrent.torrent"],
                    "UTTypeTagSpecification": ["public.filename-extension": ["magnets"]],
                ]],
            ]),
            "family.plist": Fixtures.handler("org.example.family", types: [Fixtures.claim(["com.bittorrent.torrent"], role: "Editor")]),
        ])
        #expect(registry.failures.isEmpty, "\(registry.failures)")
        let catalog = registry.catalog
        #expect(catalog.match(filename: "a.torrent").contentType == "org.bittorrent.torrent")
        #expect(catalog.conforms("org.bittorrent.torrent", to: "com.bittorrent.torrent"))
        #expect(catalog.conforms("org.bittorrent.torrent", to: "public.data"), "the declared parents stay too")
        #expect(catalog.conforms("org.example.magnet-list", to: "com.bittorrent.torrent"), "and a child of the type keeps them")
        #expect(catalog.declaration(for: "com.bittorrent.torrent")?.filenameExtensions == [])

        // The named parent is claimable: the family handler gets what only it claims.
        let selector = HandlerSelector(registry: registry)
        #expect(selector.select(contentType: "org.bittorrent.torrent").bundleIdentifier == "org.example.torrent")
        let child = selector.select(contentType: "org.example.magnet-list")
        #expect(child.candidates.map(\.bundleIdentifier) == ["org.example.torrent"], "org.bittorrent.torrent is more specific than its parent")
        #expect(selector.select(contentType: "com.bittorrent.torrent").bundleIdentifier == "org.example.family")
        #expect(selector.chooseHandler(contentType: "com.bittorrent.torrent")?.bundleIdentifier == "org.example.family")

        #expect(Self.summary(registry.warnings) == ["torrent.plist UTExportedTypeDeclarations[0].UTTypeConformsTo[0] unknown-parent"])
        #expect(registry.warnings[0].message.contains("'com.bittorrent.torrent'") && registry.warnings[0].message.contains("stays a name"))
    }

    @Test(arguments: [
        ("$(PRODUCT_BUNDLE_IDENTIFIER)", "$(PRODUCT_BUNDLE_IDENTIFIER)"),
        ("${PRODUCT_BUNDLE_IDENTIFIER}", "${PRODUCT_BUNDLE_IDENTIFIER}"),
        ("com.example.$(PRODUCT_NAME:rfc1034identifier)", "$(PRODUCT_NAME:rfc1034identifier)"),
        (" $(PRODUCT_BUNDLE_IDENTIFIER)\n", "$(PRODUCT_BUNDLE_IDENTIFIER)"),
    ])
    func anXcodeBuildVariableAsBundleIdentifierIsNamedAsSuch(identifier: String, variable: String) throws {
        for binary in [false, true] {
            let registry = try load(binary: binary, [
                "template.plist": Fixtures.handler(identifier, types: [Fixtures.claim(["public.png"])]),
                "good.plist": Fixtures.handler("com.example.good", types: [Fixtures.claim(["public.png"])]),
            ])
            #expect(registry.handlers.map(\.bundleIdentifier) == ["com.example.good"])
            let failure = try #require(registry.failures.first)
            #expect(failure.error.code == .buildVariable)
            #expect(failure.error.inputKey == "CFBundleIdentifier")
            #expect(failure.error.message.contains("Xcode build variable \(variable),"), "\(failure.error.message)")
            #expect(failure.error.description.contains("template.plist: CFBundleIdentifier: "))
        }
    }

    @Test(arguments: [false, true])
    func buildVariablesAndBadSchemesElsewhereLeaveOutThatValueOnly(binary: Bool) throws {
        let registry = try load(binary: binary, ["vars.plist": Fixtures.handler(
            "com.example.vars",
            types: [Fixtures.claim(["$(PRODUCT_BUNDLE_IDENTIFIER).document", "public.png"])],
            schemes: ["fb$(FACEBOOK_APP_ID)", "todo list", "1todo", "vars"],
            extra: ["UTExportedTypeDeclarations": [
                ["UTTypeIdentifier": "$(PRODUCT_BUNDLE_IDENTIFIER).document", "UTTypeConformsTo": ["public.data"]],
                ["UTTypeIdentifier": "com.example.vars.kept", "UTTypeConformsTo": ["public.data"]],
            ]]
        )])
        #expect(registry.failures.isEmpty, "\(registry.failures)")
        let handler = try #require(registry.handler(for: "com.example.vars"))
        #expect(handler.claims.map(\.contentType) == ["public.png"])
        #expect(handler.manifest.schemes == ["vars"])
        #expect(handler.manifest.exportedTypes.map(\.identifier) == ["com.example.vars.kept"])
        #expect(Self.summary(registry.warnings) == [
            "vars.plist CFBundleDocumentTypes[0].LSItemContentTypes[0] build-variable",
            "vars.plist CFBundleURLTypes[0].CFBundleURLSchemes[0] build-variable",
            "vars.plist CFBundleURLTypes[0].CFBundleURLSchemes[1] invalid-value",
            "vars.plist CFBundleURLTypes[0].CFBundleURLSchemes[2] invalid-value",
            "vars.plist UTExportedTypeDeclarations[0].UTTypeIdentifier build-variable",
        ])
        #expect(registry.warnings[1].message.contains("$(FACEBOOK_APP_ID)"))
        #expect(registry.warnings[2].message.contains("RFC 3986"))
    }

    @Test(arguments: [false, true])
    func valuesOfTheWrongTypeAreIgnoredWithAWarning(binary: Bool) throws {
        let registry = try load(binary: binary, ["types.plist": [
            "CFBundleIdentifier": "com.example.types",
            "CFBundleName": 42,
            "CFBundleDocumentTypes": [
                "public.png",
                ["LSItemContentTypes": ["public.jpeg", 7, ""], "CFBundleTypeRole": "Viewer", "LSTypeIsPackage": "YES"],
            ],
            "CFBundleURLTypes": true,
        ]])
        #expect(registry.failures.isEmpty, "\(registry.failures)")
        let handler = try #require(registry.handler(for: "com.example.types"))
        #expect(handler.manifest.name == nil)
        #expect(handler.claims.map(\.contentType) == ["public.jpeg"])
        #expect(handler.claims.first?.isPackage == false)
        #expect(Self.summary(registry.warnings) == [
            "types.plist CFBundleName wrong-type",
            "types.plist CFBundleDocumentTypes[0] wrong-type",
            "types.plist CFBundleDocumentTypes[1].LSItemContentTypes[1] wrong-type",
            "types.plist CFBundleDocumentTypes[1].LSItemContentTypes[2] invalid-value",
            "types.plist CFBundleDocumentTypes[1].LSTypeIsPackage wrong-type",
            "types.plist CFBundleURLTypes wrong-type",
        ])
        #expect(registry.warnings[1].message.contains("found a string; this entry is skipped"), "\(registry.warnings[1].message)")
    }

    /// A key a letter or two from one docroute reads is named with the likely key, whatever its
    /// case; Apple's own keys near a read one (`CFBundleTypeIconFile`) and keys far from all are not.
    @Test(arguments: [false, true])
    func keysNearAReadKeyAreTakenForMisspellings(binary: Bool) throws {
        let registry = try load(binary: binary, [
            "m.plist": [
                "CFBundleIdentifier": "com.example.m",
                "cfBundleDocumentTypes": [["LSItemContentTypes": ["public.png"]]],
                "CFBundleDocumentTypes": [["LSItemContentType": ["public.png"], "CFBundleTypeIconFile": "m.icns", "NSDocumentClass": "Doc"]],
                "SUFeedURL": "https://example.com/appcast.xml",
            ],
        ])
        #expect(Self.summary(registry.warnings) == [
            "m.plist cfBundleDocumentTypes misspelled-key",
            "m.plist CFBundleDocumentTypes[0].LSItemContentType misspelled-key",
            "m.plist  claims-nothing",
        ])
        #expect(registry.warnings.first?.message.contains("did you mean 'CFBundleDocumentTypes'?") == true)
    }

    /// docrouted logs each warning at reload at warning level, with the file and key path.
    @Test func warningsAreLoggedWithFileAndKeyPath() throws {
        let records = LogRecords()
        let logger = Logger(label: "test", factory: { _ in RecordingLogHandler(records: records) })
        let registry = try load(binary: false, [
            "quicklook.plist": Fixtures.handler("com.example.quicklook", types: [Fixtures.claim(["public.png"], role: "QLGenerator")]),
            "broken.plist": ["CFBundleName": "no identifier"],
        ], logger: logger)
        // The generator's only claim is skipped, so it claims nothing: a second warning.
        #expect(registry.warnings.map(\.code) == [.unknownRole, .claimsNothing])
        let logged = records.all
        let warning = try #require(logged.first { $0.level == .warning })
        #expect(warning.message.contains("'QLGenerator'"), "\(warning.message)")
        #expect(warning.metadata["path"]?.hasSuffix("quicklook.plist") == true)
        #expect(warning.metadata["key-path"] == "CFBundleDocumentTypes[0].CFBundleTypeRole")
        #expect(warning.metadata["code"] == "unknown-role")
        #expect(logged.contains { $0.level == .error && $0.metadata["path"]?.hasSuffix("broken.plist") == true })
        #expect(logged.contains { $0.level == .info && $0.metadata["warnings"] == "2" && $0.metadata["failed"] == "1" })
    }

    @Test(arguments: [
        ("$(PRODUCT_BUNDLE_IDENTIFIER)", ["$(PRODUCT_BUNDLE_IDENTIFIER)"]),
        ("a${B}c$(D:rfc1034identifier)", ["${B}", "$(D:rfc1034identifier)"]),
        ("com.example.app", []),
        ("cost $5 or $(", []),
        ("$(5)", []),
    ])
    func buildVariablesAreFound(text: String, expected: [String]) {
        #expect(ManifestReader.Reader.buildVariables(in: text) == expected)
    }
}

/// Log records kept for a test to read.
final class LogRecords: Sendable {
    struct Record: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    let records = Mutex<[Record]>([])
    var all: [Record] { records.withLock { $0 } }
}

struct RecordingLogHandler: LogHandler {
    let records: LogRecords
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String, line: UInt) {
        let merged = self.metadata.merging(metadata ?? [:]) { $1 }.mapValues { "\($0)" }
        records.records.withLock { $0.append(LogRecords.Record(level: level, message: "\(message)", metadata: merged)) }
    }
}
