import Foundation
import Logging
import SystemPackage
@testable import DocRouteCore

#if canImport(Glibc)
import Glibc
#endif

/// A real folder under /tmp (or another base) for one test, removed afterwards.
final class Scratch {
    let root: FilePath

    init(base: String = NSTemporaryDirectory()) throws {
        var template = Array((base.hasSuffix("/") ? base : base + "/").utf8CString.dropLast()) + Array("docroute-test-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw DeliveryError(code: .io, message: "mkdtemp failed") }
        root = FilePath(String(cString: made))
    }

    func remove() {
        // Give back write permission first: some tests take it away.
        _ = try? FileManager.default.subpathsOfDirectory(atPath: root.string).forEach { sub in
            chmod(root.appending(sub).string, 0o755)
        }
        try? FileManager.default.removeItem(atPath: root.string)
    }

    func path(_ relative: String) -> FilePath { relative.isEmpty ? root : root.appending(relative) }

    @discardableResult
    func folder(_ relative: String) throws -> FilePath {
        let path = path(relative)
        try FileManager.default.createDirectory(atPath: path.string, withIntermediateDirectories: true)
        return path
    }

    func write(_ relative: String, _ bytes: [UInt8]) throws {
        let path = path(relative)
        try FileManager.default.createDirectory(atPath: path.removingLastComponent().string, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: path.string, contents: Data(bytes)) else {
            throw DeliveryError(code: .io, message: "cannot write \(path)")
        }
    }

    func write(_ relative: String, _ text: String) throws { try write(relative, Array(text.utf8)) }

    func read(_ relative: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path(relative).string).map(Array.init)
    }

    /// Names in a folder, sorted; empty if it does not exist.
    func list(_ relative: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path(relative).string)) ?? []).sorted()
    }

    /// Every file below a folder, recursively, relative to it.
    func allFiles(_ relative: String) -> [String] {
        let base = path(relative).string
        guard let enumerator = FileManager.default.enumerator(atPath: base) else { return [] }
        var files: [String] = []
        while let next = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: base + "/" + next, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(next)
            }
        }
        return files.sorted()
    }
}

/// An inbox folder whose files are opened the way the intake opens them.
final class TestInbox {
    let path: FilePath
    let directory: FileDescriptor
    private var opened: [FileDescriptor] = []

    init(_ path: FilePath) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path.string, withIntermediateDirectories: true)
        directory = try SystemCall.openDirectory(path)
    }

    /// Opens `name` with O_NOFOLLOW | O_NONBLOCK and fstat's it, as intake does.
    func request(
        _ name: String,
        container: FilePath,
        mailbox: String = "Mail",
        chain: String? = nil,
        bundle: String = "com.example.viewer",
        contentType: String = "public.data",
        annotation: String? = nil
    ) throws -> DeliveryRequest {
        try request(component: FilePath.Component(name)!, container: container, mailbox: mailbox,
                    chain: chain ?? Self.lastExtension(name), bundle: bundle, contentType: contentType, annotation: annotation)
    }

    func request(
        component: FilePath.Component,
        container: FilePath,
        mailbox: String = "Mail",
        chain: String,
        bundle: String = "com.example.viewer",
        contentType: String = "public.data",
        annotation: String? = nil
    ) throws -> DeliveryRequest {
        let source = try SystemCall.open(component, in: directory, flags: O_RDONLY | O_NONBLOCK, describing: component.string)
        opened.append(source)
        let status = try SystemCall.status(of: source, describing: component.string)
        return DeliveryRequest(
            source: source, sourceStatus: status, sourcePath: path.appending(component),
            sourceDirectory: directory, sourceName: component, containerRoot: container, mailbox: mailbox,
            extensionChain: chain, contentType: contentType, bundleIdentifier: bundle, annotation: annotation)
    }

    static func lastExtension(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[dot...])
    }

    func close() {
        for descriptor in opened { SystemCall.close(descriptor) }
        opened.removeAll()
        SystemCall.close(directory)
    }
}

enum Fixtures {
    static let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Distinct content for file `index`.
    static func content(_ index: Int, size: Int = 4096) -> [UInt8] {
        var generator = SplitMix(seed: UInt64(index) &+ 0x9E37_79B9)
        return (0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }

    static func ledger(_ scratch: Scratch) throws -> DeliveryLedger {
        try DeliveryLedger(stateDirectory: scratch.path("state"), logger: logger)
    }
}

/// A tiny deterministic generator, so file contents are reproducible.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
