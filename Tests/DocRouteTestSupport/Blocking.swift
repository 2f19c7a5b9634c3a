import Dispatch

/// Runs blocking work (SQLite, fsync, a large tree of files) on a Dispatch thread and waits for it.
///
/// An async test runs on the cooperative pool, which has one thread per core: a test that holds
/// one in a blocking call starves the tasks of every test running beside it (a debounced write
/// planned for now runs seconds late). Set-up and tear-down that touch the disk go through this.
public func runBlocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}
