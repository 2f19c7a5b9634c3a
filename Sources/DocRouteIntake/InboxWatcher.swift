import DocRouteErrors
import DocRoutePlatform
import Logging
import NIOCore
import NIOPosix
import Synchronization
import SystemPackage

/// Watches inbox folders with inotify, read on a SwiftNIO event loop (never a blocking read).
///
/// The descriptor is adopted by a pipe channel with a fixed 64 KiB receive buffer: a read buffer
/// smaller than one event fails with EINVAL, which NIO would treat as fatal. Events come out of
/// ``events`` in kernel order.
package final class InboxWatcher: Sendable {
    /// What the daemon needs to know.
    package enum Event: Sendable {
        /// A file finished arriving (`IN_CLOSE_WRITE` or `IN_MOVED_TO`).
        case arrived(WatchedFolder, name: [UInt8])
        /// A name was created that is not a folder. A regular file is still being written (its
        /// arrival is the later close or rename), but a symbolic link, FIFO or device is complete.
        case created(WatchedFolder, name: [UInt8])
        /// A name went away (deleted, or renamed out of the folder).
        case removed(WatchedFolder, name: [UInt8])
        /// A folder appeared (a new mailbox, or a package document); `movedIn` when it was renamed
        /// in (`IN_MOVED_TO`, complete) rather than created in place (`IN_CREATE`).
        case folderAppeared(WatchedFolder, name: [UInt8], movedIn: Bool)
        /// The kernel's queue overflowed: events were lost; rescan everything.
        case overflow
        /// A watched folder went away (removed or renamed); re-create or re-watch it.
        case folderGone(WatchedFolder)

        /// The watched folder the event happened in; nil for an overflow.
        package var folder: WatchedFolder? {
            switch self {
            case .arrived(let folder, _), .created(let folder, _), .removed(let folder, _), .folderAppeared(let folder, _, _), .folderGone(let folder):
                folder
            case .overflow:
                nil
            }
        }
    }

    /// Why watching failed: the folder and its `errno` (the `cause`), and at the watch limit how to raise it.
    package typealias WatchError = DocRouteError<InboxWatchErrorCode>

    let descriptor: Int32
    let folders = Mutex<[Int32: WatchedFolder]>([:])
    let channel: Mutex<(any Channel)?> = .init(nil)
    let logger: Logger
    /// Events in kernel order.
    package let events: AsyncStream<Event>
    let continuation: AsyncStream<Event>.Continuation

    static let arrivals: InotifyMask = [
        .closeWrite, .movedTo, .create, .deleteSelf, .moveSelf, .onlyDirectory, .dontFollow, .excludeUnlinked,
    ]
    let mask: InotifyMask

    /// `reportRemovals` adds deletions and renames out of a folder (``Event/removed(_:name:)``):
    /// the handlers directory needs them; inboxes do not, and skip one event per delivered file.
    package init(logger: Logger, reportRemovals: Bool = false) throws {
        do throws(Errno) {
            self.descriptor = try FileDescriptor.inotify(nonBlocking: true).rawValue
        } catch {
            throw WatchError.watching("inotify", errno: error)
        }
        self.logger = logger
        self.mask = Self.arrivals.union(reportRemovals ? [.delete, .movedFrom] : [])
        (self.events, self.continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
    }

    /// Starts reading on `group`.
    package func start(on group: any EventLoopGroup) async throws {
        let handler = InotifyReadHandler(watcher: self)
        let channel = try await NIOPipeBootstrap(group: group)
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 65536))
            .channelOption(.autoRead, value: true)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(handler) }
            }
            .takingOwnershipOfDescriptor(input: descriptor)
            .get()
        self.channel.withLock { $0 = channel }
    }

    /// Adds a watch; events for it carry `folder`. Watching the same inode twice replaces the folder.
    @discardableResult
    package func watch(_ folder: WatchedFolder) throws -> Int32 {
        let wd: Int32
        do throws(Errno) {
            wd = try FileDescriptor(rawValue: descriptor).addInotifyWatch(path: folder.path, mask: mask)
        } catch {
            throw WatchError.watching(folder.path, errno: error)
        }
        folders.withLock { $0[wd] = folder }
        return wd
    }

    /// Stops watching every folder of inbox `inbox` (a reload retired it). Its events already
    /// read still come out of ``events``; the caller ignores them.
    package func unwatch(inbox: Int) {
        let removed = folders.withLock { folders -> [Int32] in
            let descriptors = folders.filter { $0.value.inbox == inbox }.map(\.key)
            for descriptor in descriptors { folders[descriptor] = nil }
            return descriptors
        }
        for watch in removed {
            do {
                try FileDescriptor(rawValue: descriptor).removeInotifyWatch(watch)
            } catch {
                // Only a descriptor that is not inotify's fails so; the watch's events are ignored anyway.
                logger.warning("an inbox watch could not be removed: \(error)")
            }
        }
    }

    /// The folders being watched now.
    package var watchedFolders: [WatchedFolder] {
        folders.withLock { Array($0.values) }
    }

    /// Stops reading and ends ``events``.
    package func stop() async {
        let channel = self.channel.withLock { $0 }
        try? await channel?.close()
        continuation.finish()
    }

    func deliver(_ decoded: [InotifyEvent]) {
        for event in decoded {
            if event.isOverflow {
                logger.warning("inotify queue overflowed: events were lost, rescanning every inbox (raise /proc/sys/fs/inotify/max_queued_events to avoid this)")
                continuation.yield(.overflow)
                continue
            }
            guard let folder = folders.withLock({ $0[event.watchDescriptor] }) else { continue }
            if event.isWatchGone {
                // IN_IGNORED follows DELETE_SELF; report once, when the kernel drops the watch.
                if event.mask.contains(.ignored) {
                    folders.withLock { _ = $0.removeValue(forKey: event.watchDescriptor) }
                    continuation.yield(.folderGone(folder))
                }
                continue
            }
            if event.isDirectory {
                if !event.mask.isDisjoint(with: [.create, .movedTo]) {
                    continuation.yield(.folderAppeared(folder, name: event.name, movedIn: event.mask.contains(.movedTo)))
                }
            } else if event.isArrival {
                continuation.yield(.arrived(folder, name: event.name))
            } else if event.mask.contains(.create) {
                continuation.yield(.created(folder, name: event.name))
            } else if !event.mask.isDisjoint(with: [.delete, .movedFrom]) {
                continuation.yield(.removed(folder, name: event.name))
            }
        }
    }
}

package final class InotifyReadHandler: ChannelInboundHandler, Sendable {
    package typealias InboundIn = ByteBuffer
    let watcher: InboxWatcher

    init(watcher: InboxWatcher) {
        self.watcher = watcher
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = Self.unwrapInboundIn(data)
        watcher.deliver(InotifyEvent.decode(&buffer))
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        watcher.logger.error("inotify read failed: \(error)")
    }
}
