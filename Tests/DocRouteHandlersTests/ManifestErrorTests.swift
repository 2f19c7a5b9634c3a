import DocRouteTestSupport
import DocRouteTypes
import Foundation
import Logging
import Testing
@testable import DocRouteHandlers

@Suite struct ManifestErrorTests {
    func load(_ build: (ManifestFixtures) throws -> Void) throws -> HandlerRegistry {
        let fixtures = try ManifestFixtures()
        defer { fixtures.remove() }
        try build(fixtures)
        try fixtures.write("good.plist", ManifestFixtures.handler("com.example.good", types: [ManifestFixtures.claim(["public.png"])]))
        return HandlerDirectory(path: fixtures.directory).load(logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    /// Each bad manifest fails alone with its key path; the good one beside it still loads.
    @Test(arguments: [
        ("not a plist at all", ManifestError.Code.notPropertyList, ""),
        ("<plist><array><string>x</string></array></plist>", .wrongType, ""),
    ])
    func unreadableFiles(text: String, code: ManifestError.Code, keyPath: String) throws {
        let registry = try load { try $0.writeRaw("bad.plist", text) }
        #expect(registry.handlers.map(\.bundleIdentifier) == ["com.example.good"])
        #expect(registry.failures.map(\.error.code) == [code])
        #expect(registry.failures.first?.file.hasSuffix("bad.plist") == true)
    }

    /// Only what leaves nothing to use fails a manifest: no usable CFBundleIdentifier, and docroute's
    /// own keys that say who receives documents and where. Everything else is a warning
    /// (ManifestLeniencyTests).
    nonisolated(unsafe) static let badManifests: [(String, [String: Any], ManifestError.Code, String)] = [
        ("no identifier", ["CFBundleName": "x"], .missingKey, "CFBundleIdentifier"),
        ("identifier of white space", ["CFBundleIdentifier": " \t\n"], .missingKey, "CFBundleIdentifier"),
        ("identifier not a string", ["CFBundleIdentifier": 7], .wrongType, "CFBundleIdentifier"),
        ("identifier with a space", ["CFBundleIdentifier": "com.example.my app"], .invalidValue, "CFBundleIdentifier"),
        ("unexpanded identifier", ["CFBundleIdentifier": "$(PRODUCT_BUNDLE_IDENTIFIER)"], .buildVariable, "CFBundleIdentifier"),
        ("relative container", ManifestFixtures.handler("com.example.bad", extra: ["DocRouteContainer": "relative/path"]), .invalidValue, "DocRouteContainer"),
        ("empty launch command", ManifestFixtures.handler("com.example.bad", extra: ["DocRouteLaunchCommand": [String]()]), .invalidValue, "DocRouteLaunchCommand"),
        ("launch command word not a string", ManifestFixtures.handler("com.example.bad", extra: ["DocRouteLaunchCommand": ["/bin/viewer", 3]]), .wrongType, "DocRouteLaunchCommand[1]"),
        ("user of the wrong type", ManifestFixtures.handler("com.example.bad", extra: ["DocRouteUser": ["nobody"]]), .wrongType, "DocRouteUser"),
    ]

    @Test(arguments: 0..<badManifests.count)
    func badKeysNameTheirKeyPath(index: Int) throws {
        let (label, plist, code, keyPath) = Self.badManifests[index]
        for binary in [false, true] {
            let registry = try load { try $0.write("bad.plist", plist, binary: binary) }
            #expect(registry.handlers.map(\.bundleIdentifier) == ["com.example.good"], "\(label)")
            let failure = try #require(registry.failures.first, "\(label)")
            #expect(failure.error.code == code, "\(label)")
            #expect(failure.error.inputKey == keyPath, "\(label)")
            #expect(failure.error.description.contains("bad.plist"), "\(label)")
        }
    }

    @Test func duplicateIdentifiersRefuseBoth() throws {
        let registry = try load {
            try $0.write("one.plist", ManifestFixtures.handler("com.example.twin", types: [ManifestFixtures.claim(["public.jpeg"])]))
            try $0.write("two.plist", ManifestFixtures.handler("com.example.TWIN", types: [ManifestFixtures.claim(["public.tiff"])]), binary: true)
        }
        #expect(registry.handlers.map(\.bundleIdentifier) == ["com.example.good"])
        #expect(registry.failures.count == 2)
        #expect(registry.failures.allSatisfy { $0.error.code == .duplicateIdentifier && $0.error.message.contains("one.plist") && $0.error.message.contains("two.plist") })
    }

    @Test func badTypeDeclarationIsSkippedButTheHandlerLoads() throws {
        let registry = try load {
            try $0.write("decl.plist", ManifestFixtures.handler("com.example.decl", types: [ManifestFixtures.claim(["com.example.ok"])], extra: [
                "UTExportedTypeDeclarations": [
                    ["UTTypeIdentifier": "com.example.ok", "UTTypeConformsTo": ["public.data"]],
                    ["UTTypeConformsTo": ["public.data"]],
                    ["UTTypeIdentifier": "com.example.orphan", "UTTypeConformsTo": ["com.example.missing"]],
                ],
            ]))
        }
        #expect(registry.handler(for: "com.example.decl") != nil)
        #expect(registry.catalog.contains("com.example.ok"))
        #expect(registry.catalog.conforms("com.example.orphan", to: "com.example.missing"), "an undeclared parent no longer drops the declaration")
        #expect(Set(registry.typeIssues.compactMap(\.inputKey)) == [
            "UTExportedTypeDeclarations[1].UTTypeIdentifier", "UTExportedTypeDeclarations[2].UTTypeConformsTo[0]",
        ])
        #expect(Set(registry.warnings.map(\.code.rawValue)) == ["missing-identifier", "unknown-parent"])
    }

    @Test func aLaunchCommandStringIsTheProgramAlone() throws {
        let registry = try load {
            try $0.write("l.plist", ManifestFixtures.handler("com.example.launch", extra: ["DocRouteLaunchCommand": "/usr/bin/viewer"]), binary: true)
        }
        #expect(registry.handler(for: "com.example.launch")?.manifest.launchCommand == ["/usr/bin/viewer"])
        // It claims nothing either (ManifestFixtures.handler gives no document type): a warning of its own.
        #expect(registry.warnings.map(\.keyPath) == ["DocRouteLaunchCommand", ""])
        #expect(registry.warnings.map(\.code) == [.oneElementArray, .claimsNothing])
    }

    @Test func linuxKeysAreRead() throws {
        let registry = try load {
            try $0.write("l.plist", ManifestFixtures.handler("com.example.linux", extra: [
                "DocRouteUser": "1234", "DocRouteLaunchCommand": ["/usr/bin/viewer", "--flag"], "DocRouteContainer": "/srv/sandbox",
            ]))
            try $0.write("m.plist", ManifestFixtures.handler("com.example.named", extra: ["DocRouteUser": "nobody"]), binary: true)
        }
        let linux = try #require(registry.handler(for: "com.example.linux"))
        #expect(linux.manifest.user == .uid(1234))
        #expect(linux.manifest.launchCommand == ["/usr/bin/viewer", "--flag"])
        #expect(linux.manifest.container == "/srv/sandbox")
        #expect(registry.handler(for: "com.example.named")?.manifest.user == .name("nobody"))
        #expect(registry.handler(for: "com.example.good")?.manifest.user == .root)
    }

    @Test func adminDefaultsSurviveAnEncodeAndRead() throws {
        let temporary = try TemporaryFolder("defaults")
        defer { temporary.remove() }
        let directory = temporary.string("state")
        let store = AdminDefaultsStore(stateDirectory: directory)
        #expect(try store.load() == AdminDefaults())
        // The daemon's atomic writer writes these bytes (DocRouteDaemonTests checks that part).
        let bytes = try store.encoded(AdminDefaults(types: ["public.png": "com.example.a"], schemes: ["todolist": "com.example.b"]))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: store.path))
        #expect(try AdminDefaultsStore(stateDirectory: directory).load().handler(forType: "PUBLIC.PNG") == "com.example.a")
        try Data("{broken".utf8).write(to: URL(fileURLWithPath: store.path))
        #expect(throws: AdminDefaultsStore.StoreError.self) { try store.load() }
    }
}
