import DocRouteTestSupport
import DocRouteTypes
import Foundation
import Testing
@testable import DocRouteHandlers

/// `DocRouteInboxRetentionDays` is read as a positive number of days; anything else keeps every copy.
@Suite struct ManifestRetentionTests {
    func read(_ data: Data) -> Result<HandlerManifest, ManifestError> {
        var issues: [TypeCatalogIssue] = []
        return ManifestReader.read(data: data, file: "m.plist", typeIssues: &issues)
    }

    static func manifest(retention: Any?) -> Data {
        var plist = ManifestFixtures.handler("com.example.kept", types: [ManifestFixtures.claim(["public.png"])])
        if let retention { plist["DocRouteInboxRetentionDays"] = retention }
        return (try? PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)) ?? Data()
    }

    @Test(arguments: [(0.0001, 0.0001), (30, 30.0), (1, 1.0), (2.5, 2.5)] as [(Double, Double)])
    func retentionIsAPositiveNumberOfDays(written: Double, read days: Double) throws {
        let value: Any = written == written.rounded() ? Int(written) as Any : written as Any
        let manifest = try read(Self.manifest(retention: value)).get()
        #expect(manifest.inboxRetentionDays == days)
        #expect(manifest.warnings.isEmpty, "\(manifest.warnings)")
    }

    @Test func noRetentionKeepsEveryCopy() throws {
        #expect(try read(Self.manifest(retention: nil)).get().inboxRetentionDays == nil)
    }

    /// A value that cannot be used keeps every copy, with a warning: never a removal the author did not mean.
    @Test(arguments: ["30", "0", "-1", "true", "1e9"])
    func aRetentionThatCannotBeUsedKeepsEveryCopy(written: String) throws {
        let value: Any = switch written {
        case "30": "30"
        case "true": true
        default: Double(written) ?? 0
        }
        let manifest = try read(Self.manifest(retention: value)).get()
        #expect(manifest.inboxRetentionDays == nil)
        #expect(manifest.warnings.map(\.keyPath) == ["DocRouteInboxRetentionDays"], "\(manifest.warnings)")
    }
}

extension ManifestRetentionTests {
    /// The key a letter off is taken for what it is, so a retention the author meant is not
    /// silently never applied.
    @Test func aMisspelledRetentionKeyIsNamed() throws {
        var plist = ManifestFixtures.handler("com.example.kept", types: [ManifestFixtures.claim(["public.png"])])
        plist["DocRouteInboxRetentionDay"] = 7
        let manifest = try read(try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)).get()
        #expect(manifest.inboxRetentionDays == nil)
        #expect(manifest.warnings.contains { $0.keyPath == "DocRouteInboxRetentionDay" && $0.message.contains("'DocRouteInboxRetentionDays'") },
                "\(manifest.warnings)")
    }
}
