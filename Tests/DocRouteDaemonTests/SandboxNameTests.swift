@testable import DocRouteDelivery
@testable import DocRouteHandlers
@testable import DocRouteIntake
import Testing

@Suite struct SandboxNameTests {
    @Test(arguments: [
        ("1abc.pdb", ".pdb", ["1abc.pdb", "1abc-1.pdb", "1abc-2.pdb"]),
        ("1abc.pdb.gz", ".pdb.gz", ["1abc.pdb.gz", "1abc-1.pdb.gz", "1abc-2.pdb.gz"]),
        ("1abc.pdb.gz", ".gz", ["1abc.pdb.gz", "1abc.pdb-1.gz", "1abc.pdb-2.gz"]),
        ("archive.tar.gz", "tar.gz", ["archive.tar.gz", "archive-1.tar.gz", "archive-2.tar.gz"]),
        ("README", "", ["README", "README-1", "README-2"]),
        ("notes.txt", ".pdb", ["notes.txt", "notes.txt-1", "notes.txt-2"]),
        ("Report.PDF", ".PDF", ["Report.PDF", "Report-1.PDF", "Report-2.PDF"]),
        ("x.y.z", ".z", ["x.y.z", "x.y-1.z", "x.y-2.z"]),
    ])
    func counterGoesBeforeTheWholeChain(name: String, chain: String, expected: [String]) {
        let sandboxName = SandboxName(original: name, extensionChain: chain)
        #expect((0..<3).map(sandboxName.candidate) == expected)
    }

    @Test func largeCountersKeepTheChain() {
        #expect(SandboxName(original: "1abc.pdb", extensionChain: ".pdb").candidate(1234) == "1abc-1234.pdb")
    }

    @Test(arguments: [
        ("a/b.txt", "a_b.txt"),
        ("a\u{0}b", "a_b"),
        ("tab\there\nnew", "tab_here_new"),
        ("del\u{7F}c1\u{85}", "del_c1_"),
        ("invoice\u{202E}fdp.exe", "invoice_fdp.exe"),
        (".", "_"),
        ("..", "__"),
        (".hidden.txt", "_hidden.txt"),
        ("...dots", "___dots"),
        (".docroute-0123.tmp", "_docroute-0123.tmp"),
        ("", "untitled"),
        ("with space & ümlaut.pdf", "with space & ümlaut.pdf"),
        ("a.b.", "a.b."),
    ])
    func sanitising(name: String, expected: String) {
        #expect(SandboxName(original: name).original == expected)
    }

    @Test func aChainThatIsTheWholeNameIsNoChain() {
        // A leading dot is not an extension, and the name becomes visible: `_pdb`, then `_pdb-1`.
        let name = SandboxName(original: ".pdb", extensionChain: ".pdb")
        #expect(name.original == "_pdb")
        #expect(name.candidate(1) == "_pdb-1")
    }

    @Test func invalidUTF8BytesAreReplaced() {
        // "café.txt" written in Latin-1 by an old Windows zip tool.
        let bytes: [UInt8] = [0x63, 0x61, 0x66, 0xE9, 0x2E, 0x74, 0x78, 0x74]
        let name = SandboxName(originalBytes: bytes, extensionChain: ".txt")
        #expect(name.original == "caf\u{FFFD}.txt")
        #expect(name.candidate(1) == "caf\u{FFFD}-1.txt")
        #expect(String(validating: name.candidate(1).utf8, as: UTF8.self) != nil)
    }

    @Test func longNamesAreCutInTheStemAndKeepTheChain() {
        let original = String(repeating: "a", count: 300) + ".pdb.gz"
        let name = SandboxName(original: original, extensionChain: ".pdb.gz")
        for counter in [0, 1, 12, 99_999] {
            let candidate = name.candidate(counter)
            #expect(candidate.utf8.count == 255)
            #expect(candidate.hasSuffix(counter == 0 ? "a.pdb.gz" : "a-\(counter).pdb.gz"))
        }
        // Exactly 255 bytes is kept as it is.
        let exact = String(repeating: "b", count: 251) + ".pdb"
        #expect(SandboxName(original: exact, extensionChain: ".pdb").original == exact)
        #expect(SandboxName(original: exact, extensionChain: ".pdb").candidate(1) == String(repeating: "b", count: 249) + "-1.pdb")
    }

    @Test func cuttingNeverSplitsACharacter() {
        // 2-byte "é", then 4-byte emoji, then "e" with a combining accent (one character, 3 bytes).
        for unit in ["é", "🧬", "e\u{301}"] {
            let original = String(repeating: unit, count: 200) + ".pdb"
            let name = SandboxName(original: original, extensionChain: ".pdb")
            for counter in [0, 1, 7] {
                let candidate = name.candidate(counter)
                #expect(candidate.utf8.count <= 255)
                #expect(candidate.utf8.count > 255 - unit.utf8.count)
                let stem = candidate.dropLast(counter == 0 ? 4 : 4 + "-\(counter)".count)
                #expect(stem.allSatisfy { String($0) == unit }, "stem of \(unit.debugDescription) was cut inside a character")
            }
        }
    }

    @Test func roomCanBeLeftForASuffix() {
        let name = SandboxName(original: String(repeating: "q", count: 300) + ".bin", extensionChain: ".bin", maximumBytes: 255 - 7)
        #expect(name.candidate(3).utf8.count == 248)
        #expect((name.candidate(3) + ".reason").utf8.count == 255)
    }

    @Test func anAbsurdChainIsDropped() {
        let chain = "." + String(repeating: "x", count: 240)
        let name = SandboxName(original: "file" + chain, extensionChain: chain)
        #expect(name.extensionChain == "")
        #expect(name.candidate(1) == "file" + chain + "-1")
    }

    @Test(arguments: [("Mail", "Mail"), ("../etc", "___etc"), ("a/b", "a_b"), ("", "untitled"), (".Trash", "_Trash")])
    func mailboxNames(mailbox: String, expected: String) {
        #expect(SandboxName.sanitizedComponent(mailbox) == expected)
    }
}
