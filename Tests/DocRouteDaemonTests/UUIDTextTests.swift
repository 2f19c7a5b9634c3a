import DocRouteLedger
import Foundation
import Testing

/// The ledger and the wire carry delivery ids as text; the fast forms must be Foundation's exactly,
/// or rows written before would no longer be found by their ids.
@Suite struct UUIDTextTests {
    @Test func textIsFoundationsInBothCases() {
        for _ in 0..<2_000 {
            let id = UUID()
            #expect(id.ledgerText == id.uuidString)
            #expect(id.protocolText == id.uuidString.lowercased())
        }
        let fixed = UUID(uuid: (0x00, 0x01, 0x0A, 0xFF, 0x10, 0x9B, 0xC0, 0x0D, 0xE0, 0xF1, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD))
        #expect(fixed.ledgerText == "00010AFF-109B-C00D-E0F1-23456789ABCD")
        #expect(fixed.protocolText == "00010aff-109b-c00d-e0f1-23456789abcd")
    }

    @Test func readsWhatFoundationReads() {
        for _ in 0..<2_000 {
            let id = UUID()
            #expect(UUID(canonicalText: id.uuidString) == id)
            #expect(UUID(canonicalText: id.uuidString.lowercased()) == id)
            #expect(UUID(canonicalText: id.uuidString[...]) == id)
        }
    }

    @Test(arguments: [
        "", "00010AFF-109B-C00D-E0F1-23456789ABC", "00010AFF-109B-C00D-E0F1-23456789ABCDE",
        "00010AFF109B-C00D-E0F1-23456789ABCD0", "00010AFF-109B-C00D-E0F1-23456789ABCG",
        "{00010AFF-109B-C00D-E0F1-23456789AB}", "00010AFF-109B-C00D-E0F1_23456789ABCD",
        "00010AFF-109B-C00D-E0F1-23456789ABC\u{E9}",
    ])
    func refusesWhatFoundationRefuses(text: String) {
        #expect(UUID(canonicalText: text) == nil)
        #expect(UUID(uuidString: text) == nil)
    }
}
