/// The events of one connection, in the order the daemon sent them.
///
/// Ends without error when the connection is closed by ``DocRouteConnection/close()``, and
/// throws ``DocRouteClientError/Code/connectionClosed`` when the daemon goes away. It can be
/// iterated once.
public struct HandlerEvents: AsyncSequence, Sendable {
    /// Each event.
    public typealias Element = HandlerEvent
    /// How iteration fails.
    public typealias Failure = DocRouteClientError

    let stream: AsyncThrowingStream<HandlerEvent, any Error>

    /// Creates the iterator.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator())
    }

    /// Iterates the events.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<HandlerEvent, any Error>.AsyncIterator

        /// The next event, or `nil` once the connection was closed by this side.
        public mutating func next() async throws(DocRouteClientError) -> HandlerEvent? {
            do {
                return try await base.next()
            } catch {
                throw Self.clientError(error)
            }
        }

        /// The next event, or `nil` once the connection was closed by this side.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(DocRouteClientError)
            -> HandlerEvent?
        {
            do {
                return try await base.next(isolation: actor)
            } catch {
                throw Self.clientError(error)
            }
        }

        private static func clientError(_ error: any Error) -> DocRouteClientError {
            if let error = error as? DocRouteClientError { return error }
            return DocRouteClientError(code: .connectionClosed, message: "the connection failed: \(error)")
        }
    }
}
