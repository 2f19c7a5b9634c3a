import CDocRouteShim
import DocRoutePlatform
import Foundation
import Logging
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Watches the state directory for the ledger (or its write-ahead log) being removed, moved away
/// or replaced while docrouted runs, and for the ledger reporting damage: either way the daemon
/// must stop at once, loudly. SQLite would go on writing to the removed file, every commit lost
/// at the next start, while sources were removed from their inboxes.
///
/// The events are read by a thread of its own (inotify, polled every quarter second), so a busy
/// or blocked event loop cannot delay the stop.
package final class LedgerWatch: LedgerWatching {
    private let descriptor: Int32
    private let stopped = Atomic<Bool>(false)
    private let reported = Atomic<Bool>(false)
    private let names: Set<String>

    /// Starts watching the folder of `ledger`; `problem` is called once, on the watching thread
    /// or the thread that saw the damage, with what happened.
    package init(ledger: DeliveryLedger, logger: Logger, problem: @escaping @Sendable (DeliveryError) -> Void) throws {
        let path = ledger.path
        let folder = path.removingLastComponent().string
        let fileName = path.lastComponent?.string ?? DeliveryLedger.fileName
        names = [fileName, fileName + "-wal"]
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else {
            throw DeliveryError(errno: Errno(rawValue: errno), operation: "watch the ledger's folder", path: folder)
        }
        let mask = docroute_in_delete | docroute_in_moved_from | docroute_in_moved_to | docroute_in_delete_self
            | docroute_in_move_self | docroute_in_onlydir | docroute_in_dont_follow
        guard inotify_add_watch(descriptor, folder, mask) >= 0 else {
            let error = Errno(rawValue: errno)
            close(descriptor)
            throw DeliveryError(errno: error, operation: "watch the ledger's folder", path: folder)
        }
        let report: @Sendable (DeliveryError) -> Void = { [self] error in
            guard !stopped.load(ordering: .acquiring), !reported.exchange(true, ordering: .acquiringAndReleasing) else { return }
            problem(error)
        }
        ledger.onDamage(report)
        let thread = Thread { [self] in
            self.watch(folder: folder, path: path, logger: logger, report: report)
        }
        thread.name = "ledger-watch"
        thread.start()
    }

    /// Stops watching (before a clean shutdown closes the ledger, which removes its `-wal`).
    package func stop() {
        stopped.store(true, ordering: .releasing)
    }

    private func watch(folder: String, path: FilePath, logger: Logger, report: @Sendable (DeliveryError) -> Void) {
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        while !stopped.load(ordering: .acquiring) {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 250) > 0 else { continue }
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            guard count > 0 else { continue }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let event = buffer.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                let nameStart = offset + MemoryLayout<inotify_event>.size
                let nameBytes = UnsafeRawBufferPointer(rebasing: buffer[nameStart..<min(count, nameStart + Int(event.len))])
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                offset = nameStart + Int(event.len)
                let what: String?
                if event.mask & (docroute_in_delete_self | docroute_in_move_self) != 0 {
                    what = "the state directory \(folder) was removed or moved away"
                } else if names.contains(name) {
                    what = event.mask & docroute_in_moved_to != 0
                        ? "\(folder)/\(name) was replaced by another file"
                        : "\(folder)/\(name) was removed or moved away"
                } else {
                    what = nil
                }
                guard let what, !stopped.load(ordering: .acquiring) else { continue }
                report(DeliveryError(
                    code: .ledgerDamaged,
                    message: "\(what) while docrouted used it: pending notifications recorded there are gone, and deliveries recorded from now on would be lost. \(DeliveryError.advice(for: .ledgerDamaged))"))
                return
            }
        }
    }
}
