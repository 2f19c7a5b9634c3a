import Foundation

/// Runs blocking work (SQLite, fsync, a large tree of files) on a thread of its own and waits for it.
///
/// An async test runs on the cooperative pool, which has one thread per core: a test that holds
/// one in a blocking call starves the tasks of every test running beside it (a debounced write
/// planned for now runs seconds late). Set-up and tear-down that touch the disk go through this.
/// A new thread, not `DispatchQueue.global()`: on Linux the global queues and the cooperative pool
/// draw on the same few threads, so work moved there starved the pool just the same (a deep-tree
/// test stalled every other test of the run for 25 s).
public func runBlocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.name = "test-blocking"
        thread.start()
    }
}
