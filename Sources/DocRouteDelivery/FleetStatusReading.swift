import DocRouteProtocol

/// One reading of the fleet for a `status` reply: its `fleet` object, and the hosts where each
/// handler has live instances (each handler's `hosts`, docs/PROTOCOL.md, "competing instances").
package struct FleetStatusReading: Sendable {
    /// `status`'s `fleet` object.
    package var json: JSONValue
    /// This host's name in the fleet.
    package var hostName: String
    /// The live hosts that publish each handler subscribed, by lowercased handler; nil when the
    /// database could not be read.
    package var liveHostsByHandler: [String: [String]]?

    /// The hosts where `handler` has a live instance, sorted; nil when the database could not be
    /// read (a handler's `hosts` is then left out rather than guessed). This host is named by
    /// what its own dispatcher knows now, `subscribedHere`, since what it published may lag a
    /// subscription made or ended a moment ago.
    package func hosts(of handler: String, subscribedHere: Bool) -> [String]? {
        guard let liveHostsByHandler else { return nil }
        var hosts = Set(liveHostsByHandler[handler.lowercased()] ?? [])
        if subscribedHere { hosts.insert(hostName) } else { hosts.remove(hostName) }
        return hosts.sorted()
    }
}
