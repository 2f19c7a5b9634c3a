extension DaemonConfiguration {
    /// The most connections the descriptor socket serves at once.
    package static let descriptorSocketConnections = 64

    /// Descriptors kept free beyond the most docrouted holds: the Swift runtime and the C library
    /// open files of their own (libdispatch's worker monitor reads `/proc`, and aborts the process
    /// when it cannot), so `EMFILE` must never reach them.
    package static let descriptorReserve = 256

    /// The most descriptors docrouted holds at once with this configuration: a socket per main
    /// connection, a socket and one passed descriptor per descriptor-socket connection, two intake
    /// batches in flight (a source and its folder each, the copies' temporary files), the inboxes'
    /// roots and the few folders kept open between batches, and a fixed part (the ledger and its
    /// journal, inotify, event loops, the journal's socket, handlers' pipes).
    package var descriptorsNeeded: Int {
        let mainSocket = maxConnections
        let descriptorSocket = 2 * min(maxConnections, Self.descriptorSocketConnections)
        let batches = 2 * 3 * Self.intakeBatchLimit
        let folders = 2 * inboxes.count + 32
        return mainSocket + descriptorSocket + batches + folders + 128
    }
}
