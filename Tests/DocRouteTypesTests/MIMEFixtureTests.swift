import DocRouteTestSupport
import Foundation
import Testing

@testable import DocRouteTypes

/// One rule line of a compiled `magic` file, as a test writes it.
struct MagicRuleFixture {
    var indent = 0
    var offset: Int
    var value: [UInt8]
    var mask: [UInt8]? = nil
    var wordSize: Int? = nil
    var rangeLength: Int? = nil

    init(
        indent: Int = 0,
        offset: Int,
        _ value: [UInt8],
        mask: [UInt8]? = nil,
        wordSize: Int? = nil,
        rangeLength: Int? = nil
    ) {
        self.indent = indent
        self.offset = offset
        self.value = value
        self.mask = mask
        self.wordSize = wordSize
        self.rangeLength = rangeLength
    }

    init(indent: Int = 0, offset: Int, _ text: String, rangeLength: Int? = nil) {
        self.init(indent: indent, offset: offset, Array(text.utf8), rangeLength: rangeLength)
    }
}

/// Encodes the binary `MIME-Magic\0\n` format independently of the parser under test.
enum MagicFileFixture {
    static func encode(_ sections: [(priority: Int, type: String, rules: [MagicRuleFixture])]) -> [UInt8] {
        var bytes = Array("MIME-Magic\0\n".utf8)
        for section in sections {
            bytes += Array("[\(section.priority):\(section.type)]\n".utf8)
            for rule in section.rules {
                if rule.indent > 0 { bytes += Array(String(rule.indent).utf8) }
                bytes += Array(">\(rule.offset)=".utf8)
                bytes += [UInt8(rule.value.count >> 8), UInt8(rule.value.count & 0xFF)]
                bytes += rule.value
                if let mask = rule.mask { bytes += [UInt8(ascii: "&")] + mask }
                if let wordSize = rule.wordSize { bytes += Array("~\(wordSize)".utf8) }
                if let range = rule.rangeLength { bytes += Array("+\(range)".utf8) }
                bytes.append(UInt8(ascii: "\n"))
            }
        }
        return bytes
    }
}

/// A throwaway directory tree holding `mime/` fixture databases.
final class MIMEFixtureDirectory {
    let folder: TemporaryFolder
    let root: URL

    init() throws {
        folder = try TemporaryFolder("mime")
        root = URL(fileURLWithPath: folder.string, isDirectory: true)
    }

    deinit {
        folder.remove()
    }

    /// Writes `files` into `<root>/<base>/mime/` and returns `<root>/<base>` (an XDG data dir).
    @discardableResult
    func dataDirectory(_ base: String, files: [String: [UInt8]]) throws -> String {
        let mime = root.appendingPathComponent(base).appendingPathComponent("mime", isDirectory: true)
        try FileManager.default.createDirectory(at: mime, withIntermediateDirectories: true)
        for (name, bytes) in files {
            try Data(bytes).write(to: mime.appendingPathComponent(name))
        }
        return root.appendingPathComponent(base).path
    }
}

extension MIMEDatabase {
    /// A single-layer database from fixture file contents.
    static func fixture(
        globs2: String? = nil,
        magic: [UInt8]? = nil,
        subclasses: String? = nil,
        aliases: String? = nil
    ) throws -> MIMEDatabase {
        MIMEDatabase(layers: [
            try MIMEDatabaseLayer(
                directory: "/fixture/mime",
                globs2: globs2.map { Array($0.utf8) },
                magic: magic,
                subclasses: subclasses.map { Array($0.utf8) },
                aliases: aliases.map { Array($0.utf8) }
            )
        ])
    }
}

@Suite("MIME fixture encoding")
struct MIMEFixtureTests {
    /// The example `magic` file printed in the shared-mime-info spec for text/x-diff.
    static let specExample: [UInt8] = [
        0x4d, 0x49, 0x4d, 0x45, 0x2d, 0x4d, 0x61, 0x67, 0x69, 0x63, 0x00, 0x0a, 0x5b, 0x35, 0x30, 0x3a,
        0x74, 0x65, 0x78, 0x74, 0x2f, 0x78, 0x2d, 0x64, 0x69, 0x66, 0x66, 0x5d, 0x0a, 0x3e, 0x30, 0x3d,
        0x00, 0x05, 0x64, 0x69, 0x66, 0x66, 0x09, 0x0a, 0x3e, 0x30, 0x3d, 0x00, 0x04, 0x2a, 0x2a, 0x2a,
        0x09, 0x0a, 0x3e, 0x30, 0x3d, 0x00, 0x17, 0x43, 0x6f, 0x6d, 0x6d, 0x6f, 0x6e, 0x20, 0x73, 0x75,
        0x62, 0x64, 0x69, 0x72, 0x65, 0x63, 0x74, 0x6f, 0x72, 0x69, 0x65, 0x73, 0x3a, 0x20, 0x0a,
    ]

    @Test func encoderReproducesTheSpecExampleByteForByte() {
        let encoded = MagicFileFixture.encode([
            (
                50, "text/x-diff",
                [
                    MagicRuleFixture(offset: 0, "diff\t"),
                    MagicRuleFixture(offset: 0, "***\t"),
                    MagicRuleFixture(offset: 0, "Common subdirectories: "),
                ]
            )
        ])
        #expect(encoded == Self.specExample)
    }

    @Test func specExampleParsesAndMatchesEachOfItsRules() throws {
        let database = try MIMEDatabase.fixture(magic: Self.specExample)
        #expect(
            database.magicMatch(head: Array("diff\t-u a b\n".utf8)) == MIMEMagicMatch(type: "text/x-diff", priority: 50)
        )
        #expect(database.magicMatch(head: Array("***\tfoo\n".utf8))?.type == "text/x-diff")
        #expect(database.magicMatch(head: Array("Common subdirectories: a and b\n".utf8))?.type == "text/x-diff")
        #expect(database.magicMatch(head: Array("diff -u a b\n".utf8)) == nil)
    }
}
