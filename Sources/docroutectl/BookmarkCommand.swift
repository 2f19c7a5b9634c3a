import ArgumentParser
import DocRouteClient
import Foundation

/// `docroutectl bookmark`: make and resolve document bookmarks, as a handler keeps them.
struct BookmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bookmark",
        abstract: "Make or resolve a bookmark: a reference that finds a document again after it moved inside its container.",
        discussion: """
            A handler keeps a bookmark to a delivered document instead of its path. The bookmark \
            records the path relative to the container (the handler's sandbox root, the folder \
            holding Documents/), the device and inode, size, modification time and a digest of \
            the first bytes. Resolving tries the recorded path first, then searches the container \
            for the same inode, then for the same size and digest; "stale" means the document had \
            to be searched for (make a new bookmark). A bookmark never resolves outside the \
            container it was made in and never follows a symbolic link; without --container it \
            resolves only in a container of your own (owned by you, holding Documents/).
            """,
        subcommands: [Create.self, Resolve.self])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a bookmark for a document as base64.",
            discussion: "The container is the parent of the nearest Documents folder above the document, unless --container names it.")

        @Option(help: ArgumentHelp("The container (default: the folder holding the Documents folder above PATH).", valueName: "dir"))
        var container: String?

        @Argument(help: ArgumentHelp("The document.", valueName: "path"))
        var path: String

        func run() throws {
            let url = URL(fileURLWithPath: path)
            do {
                let bookmark = try DocumentBookmark(url: url, container: container.map { URL(fileURLWithPath: $0, isDirectory: true) })
                StandardStreams.output(line: bookmark.data.base64EncodedString())
            } catch {
                StandardStreams.error("cannot bookmark \(path): \(error)")
                throw ExitCode.failure
            }
        }
    }

    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Find the document a bookmark refers to; print its URL and whether the bookmark was stale.",
            discussion: """
                Prints the document's file URL on the first line and "current" or "stale" on the \
                second. Exits 1 with the reason (not-found, other-container, not-in-container, \
                symbolic-link, invalid-data) when it cannot be found.
                """)

        @Option(help: ArgumentHelp("Where the container is now (default: where the bookmark was made, if it is yours). It must be the same folder.", valueName: "dir"))
        var container: String?

        @Argument(help: ArgumentHelp("The bookmark, base64 as `bookmark create` printed it.", valueName: "data"))
        var data: String

        func run() throws {
            guard let bytes = Data(base64Encoded: data.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                StandardStreams.error("cannot resolve: invalid-data: the bookmark is not base64")
                throw ExitCode.failure
            }
            do {
                let bookmark = try DocumentBookmark(data: bytes)
                let found = try bookmark.resolve(container: container.map { URL(fileURLWithPath: $0, isDirectory: true) })
                StandardStreams.output(line: found.url.absoluteString)
                StandardStreams.output(line: found.isStale ? "stale" : "current")
            } catch {
                StandardStreams.error("cannot resolve the bookmark: \(error)")
                throw ExitCode.failure
            }
        }
    }
}
