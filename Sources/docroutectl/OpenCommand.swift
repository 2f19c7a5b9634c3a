import ArgumentParser
import DocRouteClient
import DocRoutePlatform
import Foundation
import SystemPackage

/// `docroutectl open`: route a file or a URL to its handler through docrouted, list who could
/// open it (Open In…), or send it to one of them.
struct OpenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Send a file or a URL to its handler, list the handlers that could open it, or pick one (Open In…).",
        discussion: """
            A path (relative or absolute) is opened by docroutectl itself, as you, and the open \
            file is passed to docrouted (SCM_RIGHTS on its descriptor socket), which copies it into \
            the handler's sandbox and leaves the original where it is: any file you can read can \
            be opened, whatever user docrouted runs as. With a docrouted that does not offer \
            descriptor passing, the file:// URL of its absolute path is sent instead, and docrouted \
            reads the file as you (root's and docrouted's own user only, unless it runs as root). \
            A symbolic link you name is followed (docrouted itself never follows links). Anything \
            that starts with a URL scheme (todolist://…, file:///…) is sent as it is, unless a file \
            by that name exists; write ./name to make a name with a ':' a path.

            --list prints every handler that could open the document, best first, as Mail's \
            "Open In…" list: rank (LSHandlerRank), role (CFBundleTypeRole), the claimed type that \
            matched, and which one a plain open picks (default). Nothing is copied. \
            --with BUNDLE_ID sends the document to that handler instead of the default; it must be \
            one of that list, otherwise docrouted's error names the candidates.

            Prints the handler, the delivery ID and, for a file, its type; exits 1 with \
            docrouted's error otherwise.
            """)

    @OptionGroup var daemon: DaemonSocketOptions

    @Option(help: ArgumentHelp("The mailbox a file arrives in (docrouted's default: Shared).", valueName: "name"))
    var mailbox: String?

    @Flag(help: "List every handler that could open the document, best first, and copy nothing (Open In…).")
    var list = false

    @Option(name: .customLong("with"), help: ArgumentHelp("Send the document to this handler, one of those --list shows.", valueName: "bundle-id"))
    var bundleIdentifier: String?

    @Flag(help: "Print docrouted's reply (`opened` or `candidates`) as one JSON line.")
    var json = false

    @Argument(help: ArgumentHelp("A file path, or a URL such as todolist://www.acme.com?Quarterly%20Report#200806231300.", valueName: "url-or-path"))
    var target: String

    func validate() throws {
        if list && bundleIdentifier != nil { throw ValidationError("--list and --with exclude each other: list first, then open --with one of them") }
        if list && mailbox != nil { throw ValidationError("--mailbox has no meaning with --list (nothing is copied)") }
    }

    func run() async throws {
        let url = try Self.url(for: target)
        let connection = try await daemon.connectReporting()
        // A file goes as an open descriptor whenever the daemon takes one.
        var file: OpenedFile?
        if url.hasPrefix("file:"), (try? await connection.offers(.openDescriptor)) == true {
            file = try OpenedFile(url: url, shown: target)
        }
        defer { file?.close() }
        do {
            if list {
                let candidates: CandidateList
                if let file {
                    candidates = try await connection.candidates(fileDescriptor: file.descriptor, name: file.name)
                } else {
                    candidates = try await connection.candidates(url: url)
                }
                await connection.close()
                printCandidates(candidates)
                return
            }
            let opened: OpenedDocument
            if let file {
                opened = try await connection.open(fileDescriptor: file.descriptor, name: file.name, mailbox: mailbox, bundleIdentifier: bundleIdentifier)
            } else {
                opened = try await connection.open(url: url, mailbox: mailbox, bundleIdentifier: bundleIdentifier)
            }
            await connection.close()
            printOpened(opened)
        } catch {
            await connection.close()
            throw error.report(list ? "list the handlers for \(target)" : "open \(target)")
        }
    }

    func printOpened(_ opened: OpenedDocument) {
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

    func printCandidates(_ list: CandidateList) {
        if json {
            StandardStreams.output(DaemonMessage.candidates(id: nil, contentType: list.contentType, candidates: list.candidates).encodedLine())
            return
        }
        StandardStreams.output(line: "\(target): \(list.contentType ?? "URL")")
        guard !list.candidates.isEmpty else {
            StandardStreams.output(line: "  no handler can open it")
            return
        }
        let width = list.candidates.map(\.bundleIdentifier.count).max() ?? 0
        for (index, candidate) in list.candidates.enumerated() {
            let padded = candidate.bundleIdentifier.padding(toLength: width, withPad: " ", startingAt: 0)
            var line = "  \(index + 1). \(padded)  \(candidate.rank), \(candidate.role), via \(candidate.matchedType)"
            if candidate.name != candidate.bundleIdentifier { line += " (\(candidate.name))" }
            if candidate.isDefault { line += "  [default]" }
            StandardStreams.output(line: line)
        }
    }

    /// The URL to send: a URL as given, or the file URL of a path made absolute.
    static func url(for target: String) throws -> String {
        if RouteCommand.scheme(of: target) != nil, !FilePath(target).isAccessible(.exists) {
            return target
        }
        var path = RawArgument.bytes(of: target)
        guard !path.isEmpty else { throw ValidationError("give a path or a URL") }
        if path.first != UInt8(ascii: "/") {
            let directory: FilePath
            do throws(Errno) {
                directory = try FilePath.currentDirectory()
            } catch {
                throw ValidationError("cannot tell the current directory to make '\(target)' absolute: \(error.systemMessage)")
            }
            path = directory.platformBytes + [UInt8(ascii: "/")] + path
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
        guard let link = FilePath(platformBytes: path),
              let status = try? link.status(followingSymbolicLinks: false), status.isSymbolicLink,
              let real = try? link.resolvingSymbolicLinks() else { return nil }
        return real.platformBytes
    }
}

extension Array {
    fileprivate var nonEmpty: Self? { isEmpty ? nil : self }
}
