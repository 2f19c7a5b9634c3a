import DocRouteProtocol
import DocRouteTestSupport
import Foundation
import Logging
import SystemPackage
@testable import DocRouteDelivery
@testable import DocRouteIntake
@testable import DocRoutePlatform

#if canImport(Glibc)
import Glibc
#endif

/// An inbox folder whose files are opened the way the intake opens them.
final class TestInbox {
    let path: FilePath
    let directory: FileDescriptor
    private var opened: [FileDescriptor] = []

    init(_ path: FilePath) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path.string, withIntermediateDirectories: true)
        directory = try FileDescriptor.openDirectory(atPath: path)
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
        // Opened, checked and fstat'ed by intake's own code, as an inbox's file is.
        let name = component.withPlatformString { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0))) }
        let file = try IntakeFile.open(name: name, in: directory.rawValue, maxSize: .max).get()
        opened.append(FileDescriptor(rawValue: file.descriptor))
        let extra = try annotation.map { try JSONDecoder().decode([String: PropertyListValue].self, from: Data($0.utf8)) } ?? [:]
        return DeliveryRequest(
            source: file, sourceFolder: DirectoryHandle(borrowing: directory), sourceName: name,
            sourcePath: path.appending(component).string, containerRoot: container.string, mailbox: mailbox,
            extensionChain: chain, contentType: contentType, bundleIdentifier: bundle, owner: nil,
            sourceApplication: "", annotation: extra)
    }

    static func lastExtension(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[dot...])
    }

    func close() {
        for descriptor in opened { descriptor.closeIgnoringErrors() }
        opened.removeAll()
        directory.closeIgnoringErrors()
    }
}
