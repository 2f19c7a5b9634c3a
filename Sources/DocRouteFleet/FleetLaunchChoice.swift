/// Which host of a fleet launches a handler that deliveries are owed to: every host computes it
/// from the same `hosts` rows, so all agree on the answer without talking to each other.
///
/// The rule, for handler H with deliveries owed:
/// 1. A live host (heard from within its lease) has H subscribed: nothing to launch, that host
///    claims them.
/// 2. A launch of H recorded by a live host within that host's lease is in progress: nothing more,
///    the launched handler may still be starting.
/// 3. Otherwise, among the live hosts that can launch H (its manifest there has a launch command),
///    the one holding the fewest claimed deliveries, ties broken by the host name: the least
///    busy host takes the new instance, and the same inputs always give the same host.
/// 4. No live host can launch H: the deliveries wait, owed, until one can or H subscribes.
///
/// Bundle identifiers are compared without regard to case, as everywhere in docroute.
package enum FleetLaunchChoice {
    /// One host's row, as the choice needs it.
    package struct Candidate: Sendable, Hashable {
        package var name: String
        package var isLive: Bool
        package var subscribed: [String]
        package var launchable: [String]
        /// Deliveries it holds under a lease.
        package var claimed: Int

        package init(name: String, isLive: Bool, subscribed: [String], launchable: [String], claimed: Int) {
            self.name = name
            self.isLive = isLive
            self.subscribed = subscribed
            self.launchable = launchable
            self.claimed = claimed
        }

        func has(_ handler: String, in list: [String]) -> Bool {
            list.contains { $0.lowercased() == handler.lowercased() }
        }
    }

    /// What is to be done about a handler with deliveries owed.
    package enum Decision: Sendable, Hashable {
        /// A live host has it subscribed: that host claims the deliveries.
        case subscribed(on: String)
        /// A live host launched it within its lease: that launch may still subscribe.
        case launching(on: String)
        /// This host is to launch it.
        case launch(on: String)
        /// No live host can launch it; `launchableOn` names the hosts (not live) that could.
        case nowhere(launchableOn: [String])
    }

    /// The decision for `handler`, given every host's row and the live launch recorded for it, if
    /// any (``FleetQueue/launchDecision(for:)`` reads only one whose host is live and whose lease
    /// has not run out since).
    package static func decide(_ handler: String, hosts: [Candidate], launchInProgressOn: String? = nil) -> Decision {
        let live = hosts.filter(\.isLive)
        if let serving = live.filter({ $0.has(handler, in: $0.subscribed) }).map(\.name).sorted().first {
            return .subscribed(on: serving)
        }
        if let launching = launchInProgressOn, live.contains(where: { $0.name == launching }) {
            return .launching(on: launching)
        }
        let able = live.filter { $0.has(handler, in: $0.launchable) }
        if let chosen = able.min(by: { ($0.claimed, $0.name) < ($1.claimed, $1.name) }) {
            return .launch(on: chosen.name)
        }
        return .nowhere(launchableOn: hosts.filter { $0.has(handler, in: $0.launchable) }.map(\.name).sorted())
    }
}

extension FleetLaunchChoice.Decision {
    /// The decision said for `status` and the log.
    package var explanation: String {
        switch self {
        case .subscribed(let host): "subscribed on \(host)"
        case .launching(let host): "being launched on \(host)"
        case .launch(let host): "to be launched on \(host)"
        case .nowhere(let hosts) where hosts.isEmpty:
            "subscribed on no live host, and no host can launch it (no manifest with DocRouteLaunchCommand): it waits until it subscribes"
        case .nowhere(let hosts):
            "subscribed on no live host; only \(hosts.joined(separator: ", ")) can launch it, and \(hosts.count == 1 ? "it is" : "they are") not live: it waits"
        }
    }
}
