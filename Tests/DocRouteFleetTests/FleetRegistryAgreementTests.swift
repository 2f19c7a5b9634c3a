@testable import DocRouteFleet
import Foundation
import Testing

/// Which hosts `--check` and the log name for loading other handlers than this host.
struct FleetRegistryAgreementTests {
    let here = FleetHost(name: "a", registryDigest: "d1", bundleIdentifiers: ["com.example.ocr", "com.example.viewer"], version: "0.2.0")

    func peer(_ name: String, _ digest: String, _ identifiers: [String], silent: Double = 1) -> FleetRegistryAgreement.Peer {
        .init(name: name, registryDigest: digest, bundleIdentifiers: identifiers, silentSeconds: silent, leaseSeconds: 30)
    }

    @Test func hostsWithTheSameDigestAgree() {
        let agreement = FleetRegistryAgreement(host: here, peers: [peer("b", "d1", ["com.example.ocr", "com.example.viewer"])])
        #expect(agreement.differences.isEmpty)
    }

    @Test func aDifferenceNamesTheHandlersEachSideLacks() {
        let agreement = FleetRegistryAgreement(host: here, peers: [
            peer("c", "d3", ["com.example.viewer"], silent: 200),
            peer("b", "d2", ["com.example.ocr", "com.example.viewer", "org.example.new"]),
            peer("d", "d1", ["com.example.ocr", "com.example.viewer"]),
        ])
        let differences = agreement.differences
        #expect(differences.map(\.host) == ["b", "c"])
        #expect(differences[0].onlyThere == ["org.example.new"] && differences[0].onlyHere.isEmpty)
        #expect(differences[0].description.hasPrefix("host b loads another handler registry: it has org.example.new, which this host lacks;"))
        #expect(differences[1].description.hasPrefix("host c (not heard from within its lease) loads another handler registry: it lacks com.example.ocr;"))
    }

    @Test func theSameHandlersWithOtherManifestsAreSaidSo() {
        let agreement = FleetRegistryAgreement(host: here, peers: [peer("b", "d9", ["com.example.viewer", "com.example.ocr"])])
        #expect(agreement.differences.first?.description.contains("the same handlers with other manifests") == true)
    }

    /// A manifest as a property list in `format`.
    static func manifest(_ keys: [String: Any], _ format: PropertyListSerialization.PropertyListFormat) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: keys, format: format, options: 0)
    }

    static var molecules: [String: Any] { [
        "CFBundleIdentifier": "com.sunsetlakesoftware.molecules",
        "CFBundleDocumentTypes": [["CFBundleTypeName": "PDB", "LSItemContentTypes": ["com.sunsetlakesoftware.molecules.pdb"], "LSHandlerRank": "Owner"]],
        "DocRouteUser": "molecules",
    ] }

    @Test func hostsAgreeOverWhatRoutesNotOverHowEachRunsTheHandler() throws {
        let here = FleetHost.routingText(ofManifest: try Self.manifest(Self.molecules, .xml))
        // Binary instead of XML, and the host's own keys otherwise: the same handler for routing.
        var launched = Self.molecules
        launched["DocRouteLaunchCommand"] = "/usr/bin/molecules --open"
        launched["DocRouteUser"] = "someone-else"
        #expect(FleetHost.routingText(ofManifest: try Self.manifest(launched, .binary)) == here)
        // Another rank is another routing.
        var ranked = Self.molecules
        ranked["CFBundleDocumentTypes"] = [["CFBundleTypeName": "PDB", "LSItemContentTypes": ["com.sunsetlakesoftware.molecules.pdb"], "LSHandlerRank": "Alternate"]]
        #expect(FleetHost.routingText(ofManifest: try Self.manifest(ranked, .xml)) != here)
        // Not a property list: its bytes.
        #expect(FleetHost.routingText(ofManifest: Data("not a plist".utf8)) == Data("not a plist".utf8).base64EncodedString())
    }
}
