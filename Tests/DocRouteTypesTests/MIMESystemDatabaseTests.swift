import Foundation
import Testing

@testable import DocRouteTypes

/// What this machine has; kept outside the suite because its traits cannot refer to the suite itself.
private enum InstalledTools {
    static let systemDatabaseExists = FileManager.default.fileExists(atPath: "/usr/share/mime/magic")
    static let gioExists = FileManager.default.isExecutableFile(atPath: "/usr/bin/gio")
}

/// Checks against the machine's own /usr/share/mime and GIO's answer for real files.
@Suite(
    "MIME against the installed shared-mime-info",
    .enabled(if: InstalledTools.systemDatabaseExists, "no /usr/share/mime/magic on this machine")
)
struct MIMESystemDatabaseTests {
    static let environment = ["XDG_DATA_HOME": "/nonexistent-docroute", "XDG_DATA_DIRS": "/usr/share"]

    let database: MIMEDatabase

    init() throws {
        database = try MIMEDatabase.load(environment: Self.environment)
    }

    @Test func loadsWithoutIssues() throws {
        #expect(database.source == "shared-mime-info: /usr/share/mime")
        #expect(database.issues.isEmpty)
        #expect(database.maximumHeadLength > 257)
    }

    @Test func wellKnownNamesAndAliases() {
        #expect(database.detect(filename: "report.PDF", head: []).mimeType == "application/pdf")
        #expect(database.detect(filename: "backup.tar.gz", head: []).mimeType == "application/x-compressed-tar")
        #expect(database.detect(filename: "script.py", head: []).mimeType == "text/x-python")
        #expect(database.canonical("text/xml") == "application/xml")
        #expect(database.canonical("application/x-gzip") == "application/gzip")
        #expect(database.isSubclass("application/vnd.oasis.opendocument.text", of: "application/zip"))
        #expect(database.isSubclass("image/svg+xml", of: "text/plain"))
    }

    @Test func pngNamedTxtIsTextPlainLikeGIO() throws {
        let png = try #require(
            Self.firstFile(in: ["/usr/share/icons", "/usr/share/pixmaps", "/usr/share"], suffix: ".png")
        )
        let head = try Self.head(of: png, count: database.maximumHeadLength)
        #expect(database.detect(filename: "x.txt", head: head).mimeType == "text/plain")
        #expect(database.detect(filename: "x", head: head).mimeType == "image/png")
    }

    @Test(.enabled(if: InstalledTools.gioExists, "gio (libglib2.0-bin) is not installed"))
    func realFilesAgreeWithGIO() throws {
        var samples: [(path: String, expected: String)] = []
        if let png = Self.firstFile(in: ["/usr/share/icons", "/usr/share/pixmaps", "/usr/share"], suffix: ".png") {
            samples.append((png, "image/png"))
        }
        if let gzip = Self.firstFile(in: ["/usr/share/doc"], suffix: "/changelog.Debian.gz") {
            samples.append((gzip, "application/gzip"))
        }
        if let xml = Self.firstFile(in: ["/usr/share/mime/packages", "/usr/share"], suffix: ".xml") {
            samples.append((xml, "application/xml"))
        }
        if let script = Self.firstShellScript(in: "/usr/bin") {
            samples.append((script, "application/x-shellscript"))
        }
        try #require(samples.count == 4, "could not find a PNG, a gzip, an XML file and a shell script: \(samples)")

        let copies = try MIMEFixtureDirectory()
        for (index, sample) in samples.enumerated() {
            let head = try Self.head(of: sample.path, count: database.maximumHeadLength)
            let detection = database.detect(filename: sample.path, head: head)
            #expect(detection.mimeType == sample.expected, "\(sample.path): \(detection)")
            #expect(detection.mimeType == Self.gioType(of: sample.path), "\(sample.path)")

            // The same bytes under a meaningless name: GIO and we must both sniff the content.
            let anonymous = copies.root.appendingPathComponent("sample\(index)").path
            try Data(head).write(to: URL(fileURLWithPath: anonymous))
            let sniffed = database.detect(filename: anonymous, head: head)
            #expect(sniffed.decidedBy == .magic, "\(sample.path): \(sniffed)")
            #expect(sniffed.mimeType == Self.gioType(of: anonymous), "\(sample.path) sniffed")
            #expect(database.detect(filename: nil, head: head, options: .contentOnly).mimeType == sniffed.mimeType)
        }
    }

    @Test(.enabled(if: InstalledTools.gioExists, "gio (libglib2.0-bin) is not installed"))
    func textAndBinaryFallbacksAgreeWithGIO() throws {
        let directory = try MIMEFixtureDirectory()
        let cases: [(name: String, bytes: [UInt8], expected: String)] = [
            ("plain-words", Array("just some words, nothing more\n".utf8), "text/plain"),
            ("random-bytes", [0x00, 0x9C, 0x13, 0x37, 0x01, 0x02, 0xFE], "application/octet-stream"),
        ]
        for sample in cases {
            let path = directory.root.appendingPathComponent(sample.name).path
            try Data(sample.bytes).write(to: URL(fileURLWithPath: path))
            let detection = database.detect(filename: path, head: sample.bytes)
            #expect(detection.mimeType == sample.expected)
            #expect(detection.mimeType == Self.gioType(of: path))
        }
    }

    // MARK: helpers

    static func head(of path: String, count: Int) throws -> [UInt8] {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        return [UInt8](try handle.read(upToCount: count) ?? Data())
    }

    static func firstFile(in roots: [String], suffix: String) -> String? {
        for root in roots {
            guard let walker = FileManager.default.enumerator(atPath: root) else { continue }
            while let relative = walker.nextObject() as? String {
                guard relative.hasSuffix(suffix) else { continue }
                let path = root + "/" + relative
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                    (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == nil
                {
                    return path
                }
            }
        }
        return nil
    }

    /// A file in `directory` without an extension that starts with `#!/bin/sh`.
    static func firstShellScript(in directory: String) -> String? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory))?.sorted() ?? []
        for name in names where !name.contains(".") {
            let path = directory + "/" + name
            if let head = try? Self.head(of: path, count: 16), head.starts(with: Array("#!/bin/sh\n".utf8)) {
                return path
            }
        }
        return nil
    }

    /// `gio info -a standard::content-type`, lowercased like our canonical form.
    static func gioType(of path: String) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gio")
        process.arguments = ["info", "-a", "standard::content-type", path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("standard::content-type:") {
                return trimmed.dropFirst("standard::content-type:".count).trimmingCharacters(in: .whitespaces)
                    .lowercased()
            }
        }
        return nil
    }
}
