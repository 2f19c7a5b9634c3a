/// Why an inbox was listed again, the `reason` label of `docroute_rescans_total`.
package enum RescanReason: String, Sendable, CaseIterable {
    /// The listing at start that finds what arrived while docrouted was not running.
    case startup
    /// The kernel's inotify queue overflowed; events were lost, so every inbox is listed.
    case overflow
    /// An inbox folder was removed and has been created and watched again.
    case inboxRecreated = "inbox_recreated"
    /// More files arrived than the intake keeps in memory; the rest are found by listing the
    /// inboxes again once the files in hand are delivered.
    case backlog
    /// A reload added an inbox, which is listed as at start.
    case configuration
}
