import DocRouteTestSupport
import DocRouteTypes
import Foundation
import Testing
@testable import DocRouteHandlers

/// The Info.plist of the project's seed page (../shared/seeds: Molecules, "File type handling is new
/// with iPhone OS 3.2"), read as the page gives it: it claims .pdb as its owner, exports the type
/// with its extension and MIME type, and so routes a .pdb to itself.
@Suite(.enabled(if: Fixtures.seedsPresent, "../shared/seeds is not beside the repository"))
struct SeedManifestTests {
    static let bundle = "com.sunsetlakesoftware.molecules"

    @Test func theSeedPagesMoleculesManifestRoutesAPDBToMolecules() throws {
        let plist = try #require(try Fixtures.seedInfoPlist(bundleIdentifier: Self.bundle), "no seed page has intact Info.plist fragments")
        let fixtures = try ManifestFixtures()
        defer { fixtures.remove() }
        try plist.write(to: URL(fileURLWithPath: fixtures.directory + "/molecules.plist"))
        let registry = HandlerDirectory(path: fixtures.directory).load(logger: Fixtures.logger)
        #expect(registry.failures.isEmpty, "\(registry.failures)")
        #expect(registry.handlers.map(\.bundleIdentifier) == [Self.bundle])

        let match = registry.catalog.match(filename: "1abc.pdb")
        #expect(match.contentType == "com.sunsetlakesoftware.molecules.pdb")
        #expect(registry.catalog.preferredType(forMIMEType: "chemical/x-pdb") == "com.sunsetlakesoftware.molecules.pdb")
        #expect(registry.catalog.conformanceChain(of: "com.sunsetlakesoftware.molecules.pdb").contains("public.plain-text"))
        let selection = HandlerSelector(registry: registry).select(contentType: try #require(match.contentType))
        #expect(selection.bundleIdentifier == Self.bundle)
        // The page's second claim: a gzip archive goes to Molecules too (it opens .pdb.gz).
        #expect(HandlerSelector(registry: registry).select(contentType: "org.gnu.gnu-zip-archive").bundleIdentifier == Self.bundle)
    }
}
