import ArgumentParser
import DocRouteClient
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `docroutectl open`: route a file or a URL to its handler through docrouted.
struct OpenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Send a file or a URL to its handler, as if it had arrived in an inbox.",
        discussion: """
            A path (relative or absolute) is sent as the file:// URL of its absolute path; \
            docrouted reads the file as you (you must be able to read it), copies it into the \
            handler's sandbox and leaves the original where it is. A symbolic link you name is \
            followed (docrouted itself never follows links). Anything that starts with a \
            URL scheme (todolist://…, file:///…) is sent as it is, unless a file by that name \
            exists; write ./name to make a name with a ':' a path. Prints the handler, the \
            delivery ID and, for a file, its type; exits 1 with docrouted's error otherwise.
            """)

    @OptionGroup var daemon: DaemonSocketOptions

    @Option(help: ArgumentHelp("The mailbox a file arrives in (docrouted's default: Shared).", valueName: "name"))
    var mailbox: String?

    @Flag(help: "Print docrouted's `opened` reply as one JSON line.")
    var json = false

    @Argument(help: ArgumentHelp("A file path, or a URL such as todolist://www.acme.com?Quarterly%20Report#200806231300.", valueName: "url-or-path"))
    var target: String

    func run() async throws {
        let url = try Self.url(for: target)
        let connection: DocRouteConnection
        do {
            connection = try await daemon.connect()
        } catch {
            throw error.report("connect to docrouted")
        }
        let opened: OpenedDocument
        do {
            opened = try await connection.open(url: url, mailbox: mailbox)
        } catch {
            await connection.close()
            throw error.report("open \(url)")
        }
        await connection.close()
        if json {
            let reply = DaemonMessage.opened(
                id: nil, deliveryID: opened.deliveryID, bundleIdentifier: opened.bundleIdentifier,
                contentType: opened.contentType)
            StandardStreams.output(reply.encodedLine())
        } else {
            StandardStreams.output(line: "\(target) → \(opened.bundleIdentifier)")
            if let contentType = opened.contentType { StandardStreams.output(line: "  type      \(contentType)") }
            StandardStreams.output(line: "  delivery  \(opened.deliveryID)")
        }
    }

    /// The URL to send: a URL as given, or the file URL of a path made absolute.
    static func url(for target: String) throws -> String {
        if RouteCommand.scheme(of: target) != nil, access(target, F_OK) != 0 {
            return target
        }
        var path = RawArgument.bytes(of: target)
        guard !path.isEmpty else { throw ValidationError("give a path or a URL") }
        if path.first != UInt8(ascii: "/") {
            guard let directory = currentDirectory() else {
                throw ValidationError("cannot tell the current directory to make '\(target)' absolute: \(String(cString: strerror(errno)))")
            }
            path = directory + [UInt8(ascii: "/")] + path
        }
        path = cleaned(path)
        if let resolved = resolvedLink(path) { path = resolved }
        do {
            return try FileURL.string(forAbsolutePath: path)
        } catch {
            throw ValidationError("\(target): \(error.message)")
        }
    }

    /// Drops `.` components and repeated slashes; `..` stays for the kernel to resolve, as a
    /// link before it would make a textual resolution wrong.
    static func cleaned(_ path: [UInt8]) -> [UInt8] {
        let components = path.split(separator: UInt8(ascii: "/")).filter { !$0.elementsEqual([UInt8(ascii: ".")]) }
        return components.reduce(into: [UInt8]()) { result, component in
            result.append(UInt8(ascii: "/"))
            result.append(contentsOf: component)
        }.nonEmpty ?? [UInt8(ascii: "/")]
    }

    /// docrouted never follows a link (as in an inbox); a link the user names is theirs to follow.
    private static func resolvedLink(_ path: [UInt8]) -> [UInt8]? {
        let cPath = path.map { CChar(bitPattern: $0) } + [0]
        var info = stat()
        guard lstat(cPath, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK, let real = realpath(cPath, nil) else { return nil }
        defer { free(real) }
        var bytes: [UInt8] = []
        var cursor = real
        while cursor.pointee != 0 {
            bytes.append(UInt8(bitPattern: cursor.pointee))
            cursor += 1
        }
        return bytes
    }

    private static func currentDirectory() -> [UInt8]? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    }
}

extension Array {
    fileprivate var nonEmpty: Self? { isEmpty ? nil : self }
}
