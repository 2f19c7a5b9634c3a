import Synchronization

/// A thread-safe memo of answers by string key, for an answer that depends only on its key and on
/// the immutable value that owns the memo (a catalog, a selector), so it is never stale while its
/// owner lives.
///
/// Bounded: keys come from documents (types named by file names and MIME types), so a stream of
/// made-up ones must not grow memory without end. When full, it starts again empty.
package final class BoundedMemo<Value: Sendable>: Sendable {
    private let answers = Mutex<[String: Value]>([:])
    private let limit: Int

    /// A memo of at most `limit` answers.
    package init(limit: Int = 4096) {
        self.limit = limit
    }

    /// The answer for `key`, computed by `compute` the first time and remembered.
    package func value(for key: String, computing compute: () -> Value) -> Value {
        if let known = answers.withLock({ $0[key] }) { return known }
        let value = compute()
        answers.withLock { answers in
            if answers.count >= limit { answers.removeAll(keepingCapacity: true) }
            answers[key] = value
        }
        return value
    }
}
