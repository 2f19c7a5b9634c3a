import DocRouteTypes
import Foundation
import Testing
@testable import DocRouteHandlers

/// Inputs FuzzManifestReader found (docs/FUZZING.md). Each one crashed the process before its fix.
@Suite struct ManifestReaderFuzzRegressionTests {
    func read(_ bytes: [UInt8]) -> Result<HandlerManifest, ManifestError> {
        var issues: [TypeCatalogIssue] = []
        return ManifestReader.read(data: Data(bytes), file: "Bad.app/Info.plist", typeIssues: &issues)
    }

    /// Binary plists whose object table holds a set: Foundation's PropertyListSerialization
    /// dereferences null bridging it (Swift 6.3), so the reader must refuse them first.
    @Test(arguments: [
        // The fuzzer's find: todolist.plist as a binary plist with its root dictionary's marker
        // turned into a set's (0xD4 to 0xC4) and two bytes of strings flipped.
        "YnBsaXN0MDDEAQIDBAUGBw5fEBJDRkJ1bmRsZUlkZW50aWZpZXJcQ0ZCdW5kbGVOYW1lXxAQQ0ZCdW5kbGVVUkxUeXBlc1zGb2NSb3V0ZVVzZXJfEBFjb20uYWNtZS50b2RvbGlzdFhUb0RvTGlzdKEI0gkKCwxfEA9DRkJ1bmRsZVVSTE5hbWVfEBJDRkJ1bmRsZVVSTFNjaGVtZXNfEBFjb20uYWNtZS5Ub0RvTGlzdKENWHRvZO9saXN0VHJvb3QIESYzRlNncHJ3iZ6ytL0AAAAAAAABAQAAAAAAAAAPAAAAAAAAAAAAAAAAAAAAwg==",
        // The smallest: a set holding the string "a" as the root.
        "YnBsaXN0MDDBAVFhCAoAAAAAAAABAQAAAAAAAAACAAAAAAAAAAAAAAAAAAAADA==",
        // A set as the value of CFBundleIdentifier.
        "YnBsaXN0MDDRAQJfEBJDRkJ1bmRsZUlkZW50aWZpZXLBA1FhCAsgIgAAAAAAAAEBAAAAAAAAAAQAAAAAAAAAAAAAAAAAAAAk",
    ])
    func binaryPlistWithASetIsRefused(base64: String) throws {
        let bytes = try #require(Data(base64Encoded: base64))
        guard case .failure(let error) = read([UInt8](bytes)) else {
            Issue.record("a binary plist holding a set was accepted")
            return
        }
        #expect(error.code == .notPropertyList)
        #expect(error.description.contains("Bad.app/Info.plist"))
        #expect(error.message.contains("holds a set"))
    }

    /// The check before Foundation lets ordinary binary manifests through, and truncated or
    /// nonsensical trailers still fail as Foundation reports them instead of trapping.
    @Test func binaryPlistsWithoutSetsStillRead() throws {
        let plist: [String: Any] = [
            "CFBundleIdentifier": "com.example.viewer",
            "CFBundleDocumentTypes": [["LSItemContentTypes": ["public.png"], "CFBundleTypeRole": "Viewer"]],
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        let manifest = try read([UInt8](data)).get()
        #expect(manifest.bundleIdentifier == "com.example.viewer")

        for cut in [20, 39, data.count - 1] {
            guard case .failure(let error) = read([UInt8](data.prefix(cut))) else {
                Issue.record("a binary plist cut to \(cut) bytes was accepted")
                continue
            }
            #expect(error.code == .notPropertyList, "cut to \(cut) bytes")
        }
        var hugeTable = [UInt8](data)
        hugeTable.replaceSubrange(hugeTable.count - 24..<hugeTable.count - 16, with: [UInt8](repeating: 0xFF, count: 8))
        #expect(ManifestReader.holdsBinarySet(Data(hugeTable)) == false)
    }
}
