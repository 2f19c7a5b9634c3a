import DocRoutePlatform
import Foundation
import Logging
import Synchronization
import SystemPackage

/// Watches the state directory for the ledger (or its write-ahead log) being removed, moved away
/// or replaced while docrouted runs, and for the ledger reporting damage: either way the daemon
/// must stop at once, loudly. SQLite would go on writing to the removed file, every commit lost
/// at the next start, while sources were removed from their inboxes.
///
/// The events are read by a thread of its own (inotify, polled every quarter second), so a busy
/// or blocked event loop cannot delay the stop.
package final class LedgerWatch: LedgerWatching {
    private let descriptor: FileDescriptor
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
        descriptor = try DeliveryError.performing("watch the ledger's folder", folder) { try FileDescriptor.inotify(nonBlocking: true) }
        let mask: InotifyMask = [.delete, .movedFrom, .movedTo, .deleteSelf, .moveSelf, .onlyDirectory, .dontFollow]
        do {
            _ = try DeliveryError.performing("watch the ledger's folder", folder) { try descriptor.addInotifyWatch(path: folder, mask: mask) }
        } catch {
            descriptor.closeIgnoringErrors()
            throw error
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
        defer { descriptor.closeIgnoringErrors() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        while !stopped.load(ordering: .acquiring) {
            guard (try? descriptor.waitUntilReadable(timeoutMilliseconds: 250)) == true,
                  let events = try? descriptor.readInotifyRecords(into: buffer) else { continue }
            for event in events {
                let name = String(decoding: event.name, as: UTF8.self)
                let what: String?
                if !event.mask.isDisjoint(with: [.deleteSelf, .moveSelf]) {
                    what = "the state directory \(folder) was removed or moved away"
                } else if names.contains(name) {
                    what = event.mask.contains(.movedTo)
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
