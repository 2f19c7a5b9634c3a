import DocRoutePlatform
import DocRouteProtocol
import Logging
import NIOCore

/// One connection of the main socket: its lines read and answered in order, its idle check, and
/// the limit on unfinished lines.
extension SocketServer {
    /// Serves one admitted connection until it ends, then tells the responder.
    nonisolated func serve(_ channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>, credentials: PeerCredentials) async {
        let id = counters.withLock { counters in
            defer { counters.nextID += 1 }
            return counters.nextID
        }
        let connection = ClientConnection(id: id, credentials: credentials, channel: channel.channel)
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask { await self.closeWhenIdle(connection, channel: channel.channel) }
                    let ended: Result<Void, any Error>
                    do {
                        try await self.answerLines(from: inbound, writer: outbound, channel: channel.channel, connection: connection)
                        ended = .success(())
                    } catch {
                        ended = .failure(error)
                    }
                    group.cancelAll()
                    // Told as soon as the peer is gone, before the channel is closed: a handler
                    // that reconnects at once finds its subscription free.
                    await self.responder.connectionClosed(connection)
                    try ended.get()
                }
            }
        } catch {
            // Reset by the peer, or the server closing every connection: nothing to answer any more.
            logger.debug("connection ended: \(error)", metadata: ["peer": "\(credentials)"])
        }
    }

    /// Reads lines and answers each before the next. Returns when the peer closes, or after the
    /// error line of a line too long or of unfinished lines over the limit (the caller closes).
    nonisolated func answerLines(from inbound: NIOAsyncChannelInboundStream<ByteBuffer>, writer: NIOAsyncChannelOutboundWriter<ByteBuffer>,
                                 channel: any Channel, connection: ClientConnection) async throws {
        var framer = LineFramer()
        // Bytes of this connection's unfinished line counted in the ledger.
        var unfinished = 0
        defer { releaseUnfinished(unfinished) }
        for try await buffer in inbound {
            connection.noteRead()
            let frames = buffer.withUnsafeReadableBytes { framer.feed($0) }
            let held = framer.bufferedByteCount
            let within = ledger.unfinishedLineChanged(from: unfinished, to: held)
            unfinished = held
            guard within else {
                await refuseUnfinishedLine(connection)
                return
            }
            for frame in frames {
                switch frame {
                case .line(let bytes):
                    let message: ClientMessage
                    do throws(ProtocolError) {
                        message = try ClientMessage(decoding: bytes)
                    } catch {
                        connection.send(.error(error))
                        continue
                    }
                    connection.noteAnswering(true)
                    await responder.respond(to: message, from: connection)
                    connection.noteAnswering(false)
                case .lineTooLong:
                    await connection.sendThenWait(.error(id: nil, code: .badRequest, message: "line longer than \(WireProtocol.maximumLineLength) bytes; the connection is closed"))
                    return
                case .incompleteLine:
                    break
                }
                // A client that sends requests and does not read the replies: no more is read
                // (the kernel's socket buffers hold it) until they drain. The writer waits while
                // the channel is not writable.
                if !channel.isWritable {
                    try await writer.write(contentsOf: EmptyCollection())
                }
            }
        }
        if case .incompleteLine = framer.finish() {
            logger.debug("connection closed in the middle of a line", metadata: ["peer": "\(connection.credentials)"])
        }
    }

    /// All connections together hold too much of unfinished lines, and this one's just grew: its
    /// half line is dropped, the memory given back, and the connection closed with a reason.
    nonisolated func refuseUnfinishedLine(_ connection: ClientConnection) async {
        let limit = ledger.limits.maxUnfinishedLineBytes
        logger.warning("connection closed: unfinished lines of all clients over max_unfinished_line_bytes", metadata: [
            "peer": "\(connection.credentials)", "limit": "\(limit)",
        ])
        await connection.sendThenWait(.error(id: nil, code: .badRequest, message: "the daemon holds \(limit) bytes of unfinished lines from all clients (max_unfinished_line_bytes); your line is dropped and the connection closed: send whole lines, each ended by a newline"))
    }

    /// Gives a connection's unfinished line back to the ledger, and memory back to the kernel
    /// when enough was freed (glibc keeps freed memory otherwise: 250 half lines of 1 MiB stayed
    /// resident).
    nonisolated func releaseUnfinished(_ bytes: Int) {
        guard bytes > 0 else { return }
        _ = ledger.unfinishedLineChanged(from: bytes, to: 0)
        if ledger.buffersReleased(bytes) {
            HeapMemory.releaseFreeMemory()
        }
    }

    /// Closes a connection that sent nothing for the idle timeout, has no request in hand and has
    /// not subscribed: a subscribed handler may wait as long as it likes for documents.
    nonisolated func closeWhenIdle(_ connection: ClientConnection, channel: any Channel) async {
        let timeout = limits.idleTimeout
        var wait = timeout
        while true {
            do {
                try await Task.sleep(for: wait)
            } catch {
                return
            }
            if connection.isSubscribed { return }
            guard let idle = connection.idleFor else {
                wait = timeout
                continue
            }
            if idle >= timeout {
                logger.debug("connection closed: idle without subscribing", metadata: ["peer": "\(connection.credentials)"])
                channel.close(promise: nil)
                return
            }
            wait = timeout - idle
        }
    }
}
