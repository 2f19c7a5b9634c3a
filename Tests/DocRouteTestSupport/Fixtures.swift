import Foundation
import Logging

/// Where the tests' fixed inputs live, and the inputs made on the fly: the real-app manifests
/// and the shipped sample handlers, the mail fixtures (Python's `email` writes the expected
/// answers), the seed pages of ../shared/seeds, and files of given sizes.
///
/// Each test target adds what needs its own library in an extension (`Fixtures.ledger` in the
/// core tests, `Fixtures.Expectation` in the mail tests).
public enum Fixtures {
    /// A logger that writes nothing: libraries log, tests check what a user sees.
    public static let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The repository's root (this file is `Tests/DocRouteTestSupport/Fixtures.swift`).
    public static let repositoryRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    // MARK: Manifests

    /// Real-app-shaped Info.plists (`Firefox.plist`, `HexFiend.plist`, …), XML.
    public static let manifestsFolder = repositoryRoot + "/Tests/DocRouteHandlersTests/Fixtures"

    /// The sample handlers `make run` installs (`config/handlers/*.plist`): Molecules, the
    /// to-do list, the viewers.
    public static let sampleHandlersFolder = repositoryRoot + "/config/handlers"

    /// Sample documents (`config/samples`: `1abc.pdb`, `readme.txt`, …).
    public static let samplesFolder = repositoryRoot + "/config/samples"

    /// The bytes of a manifest fixture, `name` without `.plist`.
    public static func manifest(_ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: manifestsFolder + "/" + name + ".plist"))
    }

    /// Copies the sample handlers' manifests into `folder`; returns their file names.
    @discardableResult
    public static func copySampleHandlers(to folder: String) throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: sampleHandlersFolder).sorted()
        for name in names {
            try FileManager.default.copyItem(atPath: sampleHandlersFolder + "/" + name, toPath: folder + "/" + name)
        }
        return names
    }

    // MARK: Seeds

    /// The project's seed pages (../shared/seeds): Apple's and others' write-ups of document
    /// handling, with the Info.plist fragments (`CFBundleDocumentTypes`, `UTExportedTypeDeclarations`)
    /// the sample Molecules manifest is built from.
    public static let seedsFolder = URL(fileURLWithPath: repositoryRoot + "/../shared/seeds").standardizedFileURL.path

    /// Whether ../shared is beside the repository (it is not in a bare clone).
    public static var seedsPresent: Bool { FileManager.default.fileExists(atPath: seedsFolder) }

    /// Every seed page's text, by file name.
    public static func seeds() throws -> [String: String] {
        var pages: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: seedsFolder) where name.hasSuffix(".txt") {
            pages[name] = try String(contentsOfFile: seedsFolder + "/" + name, encoding: .utf8)
        }
        return pages
    }

    /// The Info.plist a seed page shows, made whole: its `CFBundleDocumentTypes` and
    /// `UTExportedTypeDeclarations` fragments under `bundleIdentifier`, from the first page (by
    /// name) whose fragments are intact XML (some pages' copies are mangled by translation).
    /// nil when no page has them.
    public static func seedInfoPlist(bundleIdentifier: String) throws -> Data? {
        for (_, text) in try seeds().sorted(by: { $0.key < $1.key }) {
            let fragments = ["CFBundleDocumentTypes", "UTExportedTypeDeclarations"].compactMap { arrayFragment(named: $0, in: text) }
            guard fragments.count == 2 else { continue }
            let xml = """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>
                <key>CFBundleIdentifier</key>
                <string>\(bundleIdentifier)</string>
                \(fragments.joined(separator: "\n"))
                </dict>
                </plist>
                """
            let data = Data(xml.utf8)
            if (try? PropertyListSerialization.propertyList(from: data, options: [], format: nil)) is [String: Any] { return data }
        }
        return nil
    }

    /// `<key>name</key>` and the `<array>` after it, up to its matching `</array>`.
    static func arrayFragment(named name: String, in text: String) -> String? {
        guard let key = text.range(of: "<key>\(name)</key>") else { return nil }
        let rest = text[key.upperBound...]
        guard let open = rest.range(of: "<array>"), rest[..<open.lowerBound].allSatisfy(\.isWhitespace) else { return nil }
        var depth = 0
        var index = open.lowerBound
        while index < rest.endIndex {
            if rest[index...].hasPrefix("<array>") {
                depth += 1
            } else if rest[index...].hasPrefix("</array>") {
                depth -= 1
                if depth == 0 {
                    let end = rest.index(index, offsetBy: "</array>".count)
                    return String(text[key.lowerBound..<end])
                }
            }
            index = rest.index(after: index)
        }
        return nil
    }

    // MARK: Mail

    /// The mail fixtures: `compose.py` (writes a message and, through Python's `email`, what a
    /// reader must find in it), `charset_tables.py`, and hand-written damaged messages in `defects/`.
    public static let mailFolder = repositoryRoot + "/Tests/DocRouteMailTests/Fixtures"

    /// Runs a mail fixture script with python3; its standard output.
    @discardableResult
    public static func python(_ script: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", mailFolder + "/" + script] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestSupportError("python3 \(script) \(arguments.joined(separator: " ")) failed: \(errorText)")
        }
        return data
    }

    // MARK: Files of given sizes

    /// `size` bytes that differ for each `index` and are the same on every run.
    ///
    /// Eight bytes from each step of the generator, written in place: tens of MiB (the large-copy
    /// tests) in a debug build then take a fraction of a second, not the many seconds a byte-wise
    /// `map` held one of the cooperative pool's two threads for.
    public static func content(_ index: Int, size: Int = 4096) -> [UInt8] {
        var generator = SplitMix(seed: UInt64(index) &+ 0x9E37_79B9)
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            var offset = 0
            while offset + 8 <= size {
                raw.storeBytes(of: generator.next().littleEndian, toByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            var last = generator.next()
            while offset < size {
                raw[offset] = UInt8(truncatingIfNeeded: last)
                last >>= 8
                offset += 1
            }
            initialized = size
        }
    }
}
