/// The fleet's deliveries counted by state, as one host sees them (for `status` and metrics).
package struct FleetTally: Sendable, Hashable {
    /// Committed, claimed by no host (or given back).
    package var owed: Int
    /// Claimed by this host under a lease (run out or not).
    package var claimedHere: Int
    /// Claimed by another host under a lease (run out or not).
    package var claimedElsewhere: Int
    /// Ended by the handler's acknowledgement, declines included.
    package var acknowledged: Int
    /// Of ``acknowledged``, the ones the handler declined.
    package var declined: Int
    /// What each host holds: claimed deliveries by host name (hosts holding none left out).
    package var claimedByHost: [String: Int]

    package init(owed: Int = 0, claimedHere: Int = 0, claimedElsewhere: Int = 0, acknowledged: Int = 0, declined: Int = 0,
                 claimedByHost: [String: Int] = [:]) {
        self.owed = owed
        self.claimedHere = claimedHere
        self.claimedElsewhere = claimedElsewhere
        self.acknowledged = acknowledged
        self.declined = declined
        self.claimedByHost = claimedByHost
    }
}
