import DocRouteConfiguration
import DocRoutePlatform
import DocRouteProtocol
import Synchronization

/// What clients together, and each local user, may hold of the daemon's connections and memory
/// (no local user may exhaust them and keep a handler out), and the accounting that enforces it.
///
/// - at most `maxConnections` connections; the last `reservedForHandlers` of them only for root
///   and for the users that handlers run as, so a flood by anyone else leaves room to subscribe;
/// - at most `maxPerUID` connections per uid (root is not counted);
/// - a connection that stays idle `idleTimeout` without subscribing is closed (the socket server
///   does that);
/// - at most `maxUnfinishedLineBytes` held for lines not yet complete, all connections together.
package struct ConnectionLimits: Sendable, Hashable {
    package var maxConnections: Int
    package var maxPerUID: Int
    package var reservedForHandlers: Int
    package var idleTimeout: Duration
    package var maxUnfinishedLineBytes: Int

    package init(maxConnections: Int, maxPerUID: Int = 32, reservedForHandlers: Int? = nil,
                idleTimeout: Duration = .seconds(60), maxUnfinishedLineBytes: Int = 16 << 20) {
        self.maxConnections = maxConnections
        self.maxPerUID = maxPerUID
        self.reservedForHandlers = min(reservedForHandlers ?? maxConnections / 8, max(maxConnections - 1, 0))
        self.idleTimeout = idleTimeout
        self.maxUnfinishedLineBytes = maxUnfinishedLineBytes
    }

    /// The limits a configuration sets.
    package init(_ configuration: DaemonConfiguration) {
        self.init(maxConnections: configuration.maxConnections, maxPerUID: configuration.maxConnectionsPerUID,
                  reservedForHandlers: configuration.reservedHandlerConnections,
                  idleTimeout: .seconds(configuration.idleTimeoutSeconds),
                  maxUnfinishedLineBytes: configuration.maxUnfinishedLineBytes)
    }

    /// The limits of the descriptor socket: at most 64 connections (each may hold a passed
    /// descriptor besides its own), at most an eighth of them per uid (so one user holds no more
    /// than a few, and `max_connections_per_uid` when that is lower), an eighth kept for root and
    /// handlers' users, and closed after 30 s without a complete line (PROTOCOL.md), or after
    /// `idle_timeout` when that is shorter.
    package static func descriptorSocket(_ configuration: DaemonConfiguration) -> ConnectionLimits {
        let connections = min(configuration.maxConnections, DaemonConfiguration.descriptorSocketConnections)
        return ConnectionLimits(maxConnections: connections,
                                maxPerUID: max(1, min(configuration.maxConnectionsPerUID, connections / 8)),
                                reservedForHandlers: connections / 8,
                                idleTimeout: .seconds(min(30, configuration.idleTimeoutSeconds)),
                                maxUnfinishedLineBytes: configuration.maxUnfinishedLineBytes)
    }

    /// Open connections, counted per uid, and the bytes of unfinished lines held.
    final class Ledger: Sendable {
        struct State {
            var open = 0
            var perUID: [UInt32: Int] = [:]
            var unfinishedBytes = 0
            var releasedSinceTrim = 0
        }

        let limits: ConnectionLimits
        let state = Mutex(State())

        init(limits: ConnectionLimits) {
            self.limits = limits
        }

        /// Takes a slot for `peer`, or says why not. `isHandlerUser` tells whether the peer's uid
        /// is one a handler runs as (it may take the reserved slots).
        func admit(_ peer: PeerCredentials, isHandlerUser: Bool) -> String? {
            state.withLock { state in
                let privileged = peer.uid == 0 || isHandlerUser
                let ceiling = privileged ? limits.maxConnections : limits.maxConnections - limits.reservedForHandlers
                guard state.open < ceiling else {
                    return privileged
                        ? "too many connections (\(limits.maxConnections), max_connections); try again later"
                        : "too many connections (\(ceiling) for clients that are not handlers; \(limits.reservedForHandlers) more are kept for handlers); try again later"
                }
                if peer.uid != 0 {
                    let mine = state.perUID[peer.uid, default: 0]
                    guard mine < limits.maxPerUID else {
                        return "too many connections from uid \(peer.uid) (\(limits.maxPerUID), max_connections_per_uid); close some first"
                    }
                    state.perUID[peer.uid] = mine + 1
                }
                state.open += 1
                return nil
            }
        }

        /// Gives back the slot `admit` took.
        func release(_ peer: PeerCredentials) {
            state.withLock { state in
                state.open -= 1
                if peer.uid != 0 {
                    let left = state.perUID[peer.uid, default: 1] - 1
                    state.perUID[peer.uid] = left > 0 ? left : nil
                }
            }
        }

        var openConnections: Int { state.withLock { $0.open } }

        /// A connection's unfinished line went from `old` to `new` bytes. Returns false when that
        /// growth takes all connections together over the limit (the caller drops the line).
        func unfinishedLineChanged(from old: Int, to new: Int) -> Bool {
            state.withLock { state in
                state.unfinishedBytes += new - old
                return new <= old || state.unfinishedBytes <= limits.maxUnfinishedLineBytes
            }
        }

        /// A connection gave back `bytes` of line buffer; returns whether enough was freed since
        /// the last time to hand memory back to the kernel (malloc keeps freed memory otherwise).
        func buffersReleased(_ bytes: Int) -> Bool {
            state.withLock { state in
                state.releasedSinceTrim += bytes
                // Every 4 MiB, and once nothing unfinished is held any more.
                guard state.releasedSinceTrim >= 4 << 20 || (state.unfinishedBytes == 0 && state.releasedSinceTrim >= 256 << 10) else { return false }
                state.releasedSinceTrim = 0
                return true
            }
        }
    }
}
