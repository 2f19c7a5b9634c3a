import DocRouteTestSupport
import Foundation
import NIOPosix
import Testing
@testable import DocRouteIntake

#if canImport(Glibc)
import Glibc
#endif

/// A real inotify watch on a temporary folder: what the kernel reports comes out as the events the
/// intake acts on, including the overflow that makes it list every inbox again.
@Suite struct InboxWatcherTests {
    /// A watcher reading on its own event loop, and the folder it watches.
    final class Watch: Sendable {
        let folder: TemporaryFolder
        let inbox: WatchedFolder
        let watcher: InboxWatcher
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

        init(reportRemovals: Bool = false) throws {
            folder = try TemporaryFolder("watch")
            try folder.folder("drop")
            inbox = WatchedFolder(inbox: 0, mailbox: nil, path: folder.string("drop"))
            watcher = try InboxWatcher(logger: Fixtures.logger, reportRemovals: reportRemovals)
            try watcher.watch(inbox)
        }

        func start() async throws {
            try await watcher.start(on: group)
        }

        /// Events until `predicate` accepts one (returned with all before it), or nil after 10 s.
        func events(until predicate: @escaping @Sendable (InboxWatcher.Event) -> Bool) async -> [InboxWatcher.Event]? {
            let events = watcher.events
            return await withTaskGroup(of: [InboxWatcher.Event]?.self) { group in
                group.addTask {
                    var seen: [InboxWatcher.Event] = []
                    for await event in events {
                        seen.append(event)
                        if predicate(event) { return seen }
                    }
                    return nil
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(10))
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
        }

        func stop() async {
            await watcher.stop()
            try? await group.shutdownGracefully()
            let folder = self.folder
            _ = try? await runBlocking { folder.remove() }
        }
    }

    static func named(_ name: String) -> @Sendable (InboxWatcher.Event) -> Bool {
        { event in
            if case .arrived(_, let arrived) = event { return arrived == Array(name.utf8) }
            return false
        }
    }

    @Test func aFileRenamedIntoTheFolderArrivesUnderItsNewName() async throws {
        let watch = try Watch()
        try await watch.start()
        // As a careful sender writes: a hidden name, then a rename into place.
        try watch.folder.write(".incoming-1abc.pdb", Fixtures.content(1))
        #expect(rename(watch.folder.string(".incoming-1abc.pdb"), watch.folder.string("drop/1abc.pdb")) == 0)
        let events = await watch.events(until: Self.named("1abc.pdb"))
        await watch.stop()
        guard case .arrived(let folder, _)? = events?.last else {
            Issue.record("no arrival of 1abc.pdb within 10 s: \(String(describing: events))")
            return
        }
        #expect(folder == watch.inbox, "the event names the watched folder it happened in")
        #expect(events?.count == 1, "a rename in is one arrival: \(String(describing: events))")
    }

    @Test func aFileWrittenInPlaceIsCreatedThenArrivesWhenClosed() async throws {
        let watch = try Watch()
        try await watch.start()
        let path = watch.folder.string("drop/notes.txt")
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        #expect(write(fd, "half", 4) == 4)
        #expect(close(fd) == 0)
        let events = await watch.events(until: Self.named("notes.txt"))
        await watch.stop()
        let kinds = (events ?? []).map { event -> String in
            switch event {
            case .created(_, let name): "created \(String(decoding: name, as: UTF8.self))"
            case .arrived(_, let name): "arrived \(String(decoding: name, as: UTF8.self))"
            default: "\(event)"
            }
        }
        #expect(kinds == ["created notes.txt", "arrived notes.txt"], "still being written at its create; complete at its close")
    }

    @Test func aFolderAndAFIFOAreReportedForWhatTheyAre() async throws {
        let watch = try Watch()
        try await watch.start()
        #expect(mkdir(watch.folder.string("drop/Work"), 0o755) == 0)
        #expect(mkfifo(watch.folder.string("drop/pipe.pdb"), 0o600) == 0)
        let events = await watch.events { event in
            if case .created(_, let name) = event { return name == Array("pipe.pdb".utf8) }
            return false
        }
        await watch.stop()
        let folders = (events ?? []).compactMap { event -> (String, Bool)? in
            guard case .folderAppeared(_, let name, let movedIn) = event else { return nil }
            return (String(decoding: name, as: UTF8.self), movedIn)
        }
        #expect(folders.map(\.0) == ["Work"], "\(String(describing: events))")
        #expect(folders.first?.1 == false, "made in place, not renamed in")
        #expect(events?.last.map { if case .created = $0 { true } else { false } } == true, "a FIFO is created, never closed after writing")
    }

    @Test func theWatchedFolderGoingAwayIsReported() async throws {
        let watch = try Watch()
        try await watch.start()
        #expect(rmdir(watch.folder.string("drop")) == 0)
        let events = await watch.events { if case .folderGone = $0 { true } else { false } }
        await watch.stop()
        guard case .folderGone(let folder)? = events?.last else {
            Issue.record("no folderGone within 10 s: \(String(describing: events))")
            return
        }
        #expect(folder == watch.inbox)
        #expect(watch.watcher.watchedFolders.isEmpty, "the kernel dropped the watch; so does the watcher")
    }

    static let queueLimit = (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))
        .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }

    /// Files made before anything reads the queue: each is two events (create, close-after-write),
    /// so half the kernel's queue limit and one more overflow it.
    @Test(.enabled(if: (queueLimit ?? .max) <= 65_536, "fs.inotify.max_queued_events is \(queueLimit.map(String.init) ?? "unreadable"): overflowing it would take too many files"))
    func anOverflowedQueueIsReportedSoTheInboxesAreListedAgain() async throws {
        let limit = try #require(Self.queueLimit)
        let watch = try Watch()
        // Thousands of files: made off the cooperative pool, which the tests beside this one need.
        let drop = watch.folder.string("drop")
        try await runBlocking {
            for index in 0...(limit / 2) {
                let fd = open(drop + "/\(index)", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
                guard fd >= 0 else { throw TestSupportError("cannot create file \(index): \(String(cString: strerror(errno)))") }
                close(fd)
            }
        }
        try await watch.start()
        let events = await watch.events { if case .overflow = $0 { true } else { false } }
        await watch.stop()
        guard case .overflow? = events?.last else {
            Issue.record("no overflow reported after \(limit / 2 + 1) files (\(events?.count ?? 0) events read)")
            return
        }
        #expect((events?.count ?? 0) >= limit, "the overflow comes after the \(limit) events the queue held")
    }
}
