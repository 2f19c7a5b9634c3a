import Synchronization

/// A small thread-safe memo of MIME type to UTI answers, shared by copies of a ``TypeEngine``.
final class MIMETypeMapping: Sendable {
    private let answers = Mutex<[String: String]>([:])

    func lookup(_ mimeType: String) -> String? {
        answers.withLock { $0[mimeType] }
    }

    func store(_ mimeType: String, _ type: String) {
        answers.withLock { answers in
            // Bounded: a hostile stream of made-up MIME types must not grow memory without end.
            if answers.count > 4096 { answers.removeAll() }
            answers[mimeType] = type
        }
    }
}
