import DocRoutePlatform
import DocRouteProtocol
import Logging
import SystemPackage

/// One connection of the descriptor socket: read with `recvmsg`, framed, answered in order.
extension DescriptorSocketServer {
    /// Serves one admitted connection until it ends, then gives back everything it held: its
    /// slot, its unfinished line's bytes and descriptor, its socket.
    nonisolated func serveConnection(_ socket: FileDescriptor, id: UInt64, peer: PeerCredentials) async {
        let writer = DescriptorSocketWriter(descriptor: socket)
        let connection = ClientConnection(id: id, credentials: peer, writer: writer)
        var reader = DescriptorLineReader()
        var unfinished = 0
        defer {
            reader.closeAll()
            if unfinished > 0 { _ = ledger.unfinishedLineChanged(from: unfinished, to: 0) }
            readiness.forget(socket)
            writer.close()
            ledger.release(peer)
        }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        // The idle timeout counts from the last complete line, not the last byte: a client that
        // trickles one byte every few seconds and never ends its line is closed all the same.
        var lastLine = ContinuousClock.now
        reading: while true {
            let receipt: FileDescriptor.SocketReceipt
            do {
                receipt = try socket.receive(into: &buffer)
            } catch {
                logger.debug("descriptor socket: connection ended: \(error)", metadata: ["peer": "\(peer)"])
                break
            }
            switch receipt {
            case .end:
                break reading
            case .wouldBlock:
                switch await readiness.wait(for: .readable, on: socket, until: lastLine + limits.idleTimeout) {
                case .ready:
                    continue
                case .timedOut:
                    logger.debug("descriptor socket: connection closed: no complete line for \(limits.idleTimeout)", metadata: ["peer": "\(peer)"])
                    break reading
                case .cancelled:
                    break reading
                }
            case .bytes(let count, let descriptor, let extraDescriptors):
                var lines: [DescriptorLineReader.Line]
                do throws(DescriptorLineReader.Violation) {
                    lines = try reader.feed(buffer[..<count], descriptor: descriptor, extraDescriptors: extraDescriptors)
                } catch {
                    logger.notice("descriptor socket: connection closed: \(error.message)", metadata: ["peer": "\(peer)"])
                    await sendLast(.error(id: nil, code: .badRequest, message: error.message), on: connection, writer: writer, socket: socket)
                    break reading
                }
                let held = reader.unfinishedByteCount
                let within = ledger.unfinishedLineChanged(from: unfinished, to: held)
                unfinished = held
                guard within else {
                    for line in lines { line.descriptor?.closeIgnoringErrors() }
                    let limit = limits.maxUnfinishedLineBytes
                    logger.warning("descriptor socket: connection closed: unfinished lines of all clients over max_unfinished_line_bytes",
                                   metadata: ["peer": "\(peer)", "limit": "\(limit)"])
                    await sendLast(.error(id: nil, code: .badRequest, message: "the daemon holds \(limit) bytes of unfinished lines from all clients (max_unfinished_line_bytes); your line is dropped and the connection closed: send whole lines, each ended by a newline"),
                                   on: connection, writer: writer, socket: socket)
                    break reading
                }
                while !lines.isEmpty {
                    let line = lines.removeFirst()
                    await answer(line, on: connection)
                    guard await flushReplies(writer, socket: socket) else {
                        for rest in lines { rest.descriptor?.closeIgnoringErrors() }
                        break reading
                    }
                    lastLine = .now
                }
            }
        }
        await responder.connectionClosed(connection)
    }

    /// Answers one line. A descriptor that came with it is given to the request that asks for one
    /// (`"descriptor":true`), and closed once the request is answered unless it was taken.
    nonisolated func answer(_ line: DescriptorLineReader.Line, on connection: ClientConnection) async {
        var descriptor = line.descriptor
        defer { descriptor?.closeIgnoringErrors() }
        let message: ClientMessage
        do throws(ProtocolError) {
            message = try ClientMessage(decoding: line.bytes)
        } catch {
            connection.send(.error(error))
            return
        }
        switch message {
        case .subscribe, .ack, .release, .history, .redeliver:
            connection.send(.error(id: message.id, code: .badRequest, message: "'\(message.type)' belongs on the main socket; this socket only takes hello, open, candidates and status"))
            return
        default:
            break
        }
        if message.carriesDescriptor {
            guard let passed = descriptor.take() else {
                connection.send(.error(id: message.id, code: .badRequest, message: "a \"descriptor\":true line needs exactly one descriptor passed with SCM_RIGHTS together with its first byte; none came"))
                return
            }
            connection.passedDescriptor.withLock { $0 = passed.rawValue }
        }
        await responder.respond(to: message, from: connection)
        connection.discardPassedDescriptor()
    }

    /// Sends what the answer left waiting; false when the connection failed or did not read it
    /// within ``sendTimeout``.
    nonisolated func flushReplies(_ writer: DescriptorSocketWriter, socket: FileDescriptor) async -> Bool {
        let deadline = ContinuousClock.now + Self.sendTimeout
        while true {
            switch writer.flush() {
            case .done:
                return true
            case .failed:
                return false
            case .blocked:
                guard await readiness.wait(for: .writable, on: socket, until: deadline) == .ready else { return false }
            }
        }
    }

    /// Sends the line that says why the connection ends.
    nonisolated func sendLast(_ message: DaemonMessage, on connection: ClientConnection, writer: DescriptorSocketWriter, socket: FileDescriptor) async {
        connection.send(message)
        _ = await flushReplies(writer, socket: socket)
    }
}
