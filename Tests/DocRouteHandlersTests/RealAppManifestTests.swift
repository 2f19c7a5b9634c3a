import DocRouteTypes
import Foundation
import Logging
import Testing
@testable import DocRouteHandlers

/// The manifests of `Fixtures/`, shaped like real apps' Info.plists, each read as written (XML) and
/// converted to a binary property list: they load as Launch Services loads them, and route so.
@Suite struct RealAppManifestTests {
    static let allFixtures = ["Transmission", "qBittorrent", "HexFiend", "MacDown", "QLMarkdown", "WebWeaver", "HTMLPad", "Firefox", "Template"]

    func load(_ names: [String], binary: Bool) throws -> HandlerRegistry {
        let fixtures = try ManifestFixtures()
        defer { fixtures.remove() }
        try fixtures.copyFixtures(names, binary: binary)
        return HandlerDirectory(path: fixtures.directory).load(logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    /// (file name, key path, code) of every warning, in the registry's order.
    static func summary(_ warnings: [ManifestWarning]) -> [String] {
        warnings.map { "\(($0.file as NSString).lastPathComponent) \($0.keyPath) \($0.code.rawValue)" }
    }

    @Test(arguments: [false, true])
    func aTorrentGoesToATorrentAppNotToTheHexEditor(binary: Bool) throws {
        let registry = try load(["Transmission", "qBittorrent", "HexFiend"], binary: binary)
        #expect(registry.failures.isEmpty, "\(registry.failures)")
        #expect(registry.handlers.map(\.bundleIdentifier) == ["com.ridiculousfish.HexFiend", "org.m0k.transmission", "org.qbittorrent.qBittorrent"])

        // The exported declaration is kept although its parent is declared nowhere.
        let catalog = registry.catalog
        let match = catalog.match(filename: "ubuntu-24.04-desktop-amd64.iso.torrent")
        #expect(match.contentType == "org.bittorrent.torrent")
        #expect(catalog.declaration(for: "org.bittorrent.torrent")?.origin == .exported(bundleIdentifier: "org.m0k.transmission"))
        #expect(catalog.conformanceChain(of: "org.bittorrent.torrent").starts(with: ["org.bittorrent.torrent", "com.bittorrent.torrent"]))
        #expect(catalog.preferredType(forMIMEType: "application/x-bittorrent") == "org.bittorrent.torrent")

        let selector = HandlerSelector(registry: registry)
        let selection = selector.select(contentType: try #require(match.contentType))
        #expect(selection.bundleIdentifier == "org.m0k.transmission")
        #expect(selection.candidates.map(\.bundleIdentifier) == ["org.m0k.transmission", "org.qbittorrent.qBittorrent"],
                "qBittorrent's legacy CFBundleTypeExtensions (a string) claims the same type; the hex editor is not a candidate")
        #expect(selection.reason.contains("rank Owner beats Default"), "\(selection.reason)")
        #expect(selector.chooseHandler(contentType: "org.bittorrent.torrent")?.bundleIdentifier == "org.m0k.transmission")
        #expect(selector.select(scheme: "magnet").candidates.map(\.bundleIdentifier) == ["org.m0k.transmission", "org.qbittorrent.qBittorrent"])
        #expect(selector.select(contentType: "public.data").bundleIdentifier == "com.ridiculousfish.HexFiend")

        #expect(Self.summary(registry.warnings) == [
            "Transmission.plist UTExportedTypeDeclarations[0].UTTypeConformsTo[0] unknown-parent",
            "qBittorrent.plist CFBundleIdentifier whitespace-trimmed",
            "qBittorrent.plist CFBundleDocumentTypes[0].CFBundleTypeExtensions one-element-array",
            "qBittorrent.plist CFBundleURLTypes[0].CFBundleURLSchemes one-element-array",
            "qBittorrent.plist UTImportedTypeDeclarations[0].UTTypeConformsTo one-element-array",
        ])
        let parent = try #require(registry.warnings.first { $0.code.rawValue == "unknown-parent" })
        #expect(parent.message.contains("'com.bittorrent.torrent', which no one declares"), "\(parent.message)")
        #expect(parent.description.hasSuffix("Transmission.plist: UTExportedTypeDeclarations[0].UTTypeConformsTo[0]: \(parent.message)"))
    }

    @Test(arguments: [false, true])
    func aRefusedExportOfPublicHTMLGivesNoSayInWhoOpensHTML(binary: Bool) throws {
        let registry = try load(["WebWeaver", "HTMLPad", "Firefox"], binary: binary)
        #expect(registry.failures.isEmpty, "\(registry.failures)")
        let catalog = registry.catalog
        #expect(catalog.declaration(for: "public.html")?.origin == .system)
        #expect(catalog.preferredType(forFilenameExtension: "weave") == nil, "the refused export's tags are not used")
        #expect(Self.summary(registry.warnings) == [
            "Firefox.plist CFBundleDocumentTypes[1].CFBundleTypeMIMETypes one-element-array",
            "WebWeaver.plist UTExportedTypeDeclarations[0] system-type-redefined",
        ])

        let selector = HandlerSelector(registry: registry)
        let html = try #require(catalog.match(filename: "index.html").contentType)
        #expect(html == "public.html")
        let selection = selector.select(contentType: html)
        #expect(selection.candidates.map(\.bundleIdentifier) == ["net.htmlpad.HTMLPad", "org.mozilla.firefox", "org.webweaver.WebWeaver"])
        #expect(selection.reason.contains("role Editor beats Viewer"), "\(selection.reason)")
        #expect(selector.chooseHandler(contentType: html)?.bundleIdentifier == "net.htmlpad.HTMLPad")
        #expect(selector.select(contentType: "public.svg-image").bundleIdentifier == "org.mozilla.firefox")
    }

    @Test(arguments: [false, true])
    func withoutAnEditorTheRefusedExporterWinsNothingByExporting(binary: Bool) throws {
        let registry = try load(["WebWeaver", "Firefox"], binary: binary)
        let selection = HandlerSelector(registry: registry).select(contentType: "public.html")
        // Both Default-rank Viewers: bundle identifier order decides, the export does not.
        #expect(selection.candidates.map(\.bundleIdentifier) == ["org.mozilla.firefox", "org.webweaver.WebWeaver"])
        #expect(selection.reason.contains("bundle identifier order"), "\(selection.reason)")
    }

    @Test(arguments: [false, true])
    func quickLookAndSpotlightRolesSkipTheirDocumentTypeAndNothingElse(binary: Bool) throws {
        let registry = try load(["MacDown", "QLMarkdown"], binary: binary)
        #expect(registry.failures.isEmpty, "\(registry.failures)")
        let macdown = try #require(registry.handler(for: "com.uranusjr.macdown"))
        // The last entry's legacy extensions (.mdown, .mkd) name the Markdown type the catalog declares.
        #expect(macdown.claims.map { "\($0.contentType) \($0.rank.rawValue) \($0.role.rawValue)" } == [
            "net.daringfireball.markdown Owner Editor",
            "public.plain-text Alternate Viewer",
            "net.daringfireball.markdown Default Editor",
        ])
        #expect(macdown.manifest.schemes == ["x-macdown"])
        #expect(Self.summary(macdown.manifest.warnings) == [
            "MacDown.plist CFBundleDocumentTypes[1].CFBundleTypeRole unknown-role",
            "MacDown.plist CFBundleDocumentTypes[2].CFBundleTypeRole unknown-role",
            "MacDown.plist CFBundleDocumentTypes[4].LSHandlerRank unknown-rank",
            "MacDown.plist CFBundleDocumentTypes[5].CFBundleTypeRole whitespace-trimmed",
            "MacDown.plist CFBundleURLTypes[0].CFBundleURLSchemes[1] build-variable",
        ])
        let warnings = macdown.manifest.warnings
        #expect(warnings[0].message.contains("'QLGenerator'") && warnings[0].message.contains("Quick Look"), "\(warnings[0].message)")
        #expect(warnings[1].message.contains("'MDImporter'") && warnings[1].message.contains("Spotlight"), "\(warnings[1].message)")
        #expect(warnings[2].message.contains("'Primary'") && warnings[2].message.contains("skipped"), "\(warnings[2].message)")
        #expect(warnings[4].message.contains("$(FACEBOOK_APP_ID)"), "\(warnings[4].message)")

        // The generator bundle loads, claims nothing, and says why.
        let generator = try #require(registry.handler(for: "com.example.qlmarkdown"))
        #expect(generator.claims.isEmpty)
        #expect(Self.summary(generator.manifest.warnings) == ["QLMarkdown.plist CFBundleDocumentTypes[0].CFBundleTypeRole unknown-role"])

        let selector = HandlerSelector(registry: registry)
        #expect(selector.select(contentType: "net.daringfireball.markdown").candidates.map(\.bundleIdentifier) == ["com.uranusjr.macdown"])
        #expect(selector.select(contentType: "public.rtf").bundleIdentifier == nil, "the unknown rank's claim is skipped")
    }

    @Test(arguments: [false, true])
    func anUnexpandedBundleIdentifierFailsThatManifestNamingTheVariable(binary: Bool) throws {
        let registry = try load(["Template", "HexFiend"], binary: binary)
        #expect(registry.handlers.map(\.bundleIdentifier) == ["com.ridiculousfish.HexFiend"])
        let failure = try #require(registry.failures.first)
        #expect(registry.failures.count == 1)
        #expect(failure.error.code == .buildVariable)
        #expect(failure.error.inputKey == "CFBundleIdentifier")
        #expect(failure.error.message.contains("$(PRODUCT_BUNDLE_IDENTIFIER)") && failure.error.message.contains("Xcode"), "\(failure.error.message)")
        #expect(failure.error.description.contains("Template.plist: CFBundleIdentifier: "))
    }

    /// Every fixture gives the same registry whether read as XML or as a binary property list.
    @Test func xmlAndBinaryFormsReadAlike() throws {
        let xml = try load(Self.allFixtures, binary: false)
        let binary = try load(Self.allFixtures, binary: true)
        func claims(_ registry: HandlerRegistry) -> [String] {
            registry.handlers.flatMap { handler in handler.claims.map { "\(handler.bundleIdentifier) \($0.contentType) \($0.rank) \($0.role)" } }
        }
        #expect(xml.handlers.count == 8)
        #expect(claims(xml) == claims(binary))
        #expect(Self.summary(xml.warnings) == Self.summary(binary.warnings))
        #expect(xml.warnings.map(\.message) == binary.warnings.map(\.message))
        #expect(xml.failures.map(\.error.code) == [.buildVariable])
        #expect(binary.failures.map(\.error.code) == [.buildVariable])
    }
}
