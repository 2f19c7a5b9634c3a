import Synchronization

/// The outcomes of a batch handed to a ``DeliveryBackend``, to be awaited later: handing over is
/// synchronous, so batches keep the order they were handed over in, and waiting is separate, so
/// the intake can prepare the next batch meanwhile.
package final class DeliveryTicket: Sendable {
    private enum State {
        case waiting([CheckedContinuation<[DocumentDeliveryOutcome], Never>])
        case done([DocumentDeliveryOutcome])
    }

    private let state = Mutex(State.waiting([]))

    /// A ticket not yet fulfilled.
    package init() {}

    /// A ticket fulfilled at once.
    package convenience init(outcomes: [DocumentDeliveryOutcome]) {
        self.init()
        fulfil(outcomes)
    }

    /// Gives the outcomes to every waiter, present and future; only the first call counts.
    package func fulfil(_ outcomes: [DocumentDeliveryOutcome]) {
        let waiters = state.withLock { state -> [CheckedContinuation<[DocumentDeliveryOutcome], Never>] in
            guard case .waiting(let waiters) = state else { return [] }
            state = .done(outcomes)
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: outcomes) }
    }

    /// One outcome per document, in order, once the batch is committed (or has failed).
    package var outcomes: [DocumentDeliveryOutcome] {
        get async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> [DocumentDeliveryOutcome]? in
                    switch state {
                    case .done(let outcomes): return outcomes
                    case .waiting(let waiters):
                        state = .waiting(waiters + [continuation])
                        return nil
                    }
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
