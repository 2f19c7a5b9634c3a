import Testing
@testable import DocRouteTypes

@Suite struct BoundedMemoTests {
    /// An answer is computed once while remembered; past its limit the memo starts again empty,
    /// so a stream of new keys costs recomputation, never unbounded memory.
    @Test func remembersUntilFullThenStartsAgain() {
        let memo = BoundedMemo<Int>(limit: 3)
        var computed: [String] = []
        func ask(_ key: String) -> Int {
            memo.value(for: key) {
                computed.append(key)
                return key.count
            }
        }
        #expect(ask("a") == 1)
        #expect(ask("bb") == 2)
        #expect(ask("a") == 1)
        #expect(ask("ccc") == 3)
        #expect(computed == ["a", "bb", "ccc"])
        #expect(ask("dddd") == 4, "the fourth key empties the full memo")
        #expect(ask("a") == 1)
        #expect(computed == ["a", "bb", "ccc", "dddd", "a"])
    }

    /// Dynamic identifiers' ancestors come from the memo after the first decoding, and equal a
    /// fresh decoding's.
    @Test func dynamicAncestorsAreTheDecodedOnes() {
        let catalog = TypeCatalogBuilder.withSystemTypes().build()
        let identifier = DynamicTypeIdentifier(tagClass: .mimeType, tag: "text/x-made-up", conformingTo: "public.plain-text").identifier
        let first = catalog.ancestors(of: identifier)
        #expect(first.prefix(2) == ["public.plain-text", "public.text"])
        #expect(catalog.ancestors(of: identifier) == first)
        #expect(catalog.conformanceChain(of: identifier) == [identifier] + first)
    }
}
