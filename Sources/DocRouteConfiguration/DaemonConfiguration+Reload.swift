extension DaemonConfiguration {
    /// What a reload (SIGHUP) takes from the configuration file into a running daemon.
    package struct Reload: Sendable, Hashable {
        /// What the daemon runs with from now on: the running configuration, with the inboxes
        /// and the keys that change live taken from the file. An inbox the file no longer names
        /// stays in ``DaemonConfiguration/inboxes`` as ``InboxConfiguration/retired`` (not
        /// watched, not shown): inboxes are known by their place in that list, which must not
        /// shift under files in flight.
        package var configuration: DaemonConfiguration
        /// Places of inboxes the file adds (watched and scanned now).
        package var addedInboxes: [Int] = []
        /// Places of inboxes the file no longer names, or names with another kind.
        package var retiredInboxes: [Int] = []
        /// Places of inboxes whose mailbox or source application changed (for files from now on).
        package var changedInboxes: [Int] = []
        /// Keys, as the file spells them, whose new value was taken.
        package var applied: [String] = []
        /// Keys, as the file spells them, whose new value takes effect only at the next start.
        package var needsRestart: [String] = []
    }

    /// Keys a running daemon takes from the file at a reload, besides `[[inbox]]` and
    /// `admin_group` (re-resolved at every reload): each is read where it is used, from the
    /// configuration of the moment.
    static let liveKeys: [(name: String, changed: @Sendable (DaemonConfiguration, DaemonConfiguration) -> Bool, take: @Sendable (inout DaemonConfiguration, DaemonConfiguration) -> Void)] = [
        ("admin_group", { $0.adminGroup != $1.adminGroup }, { $0.adminGroup = $1.adminGroup }),
        ("max_file_size", { $0.maxFileSize != $1.maxFileSize }, { $0.maxFileSize = $1.maxFileSize }),
        ("max_file_allocation", { $0.maxFileAllocation != $1.maxFileAllocation }, { $0.maxFileAllocation = $1.maxFileAllocation }),
        ("max_queued_files", { $0.maxQueuedFiles != $1.maxQueuedFiles }, { $0.maxQueuedFiles = $1.maxQueuedFiles }),
        ("max_mailboxes", { $0.maxMailboxes != $1.maxMailboxes }, { $0.maxMailboxes = $1.maxMailboxes }),
        ("max_url_length", { $0.maxURLLength != $1.maxURLLength }, { $0.maxURLLength = $1.maxURLLength }),
    ]

    /// Keys whose value is set into the daemon's parts when they are made (sockets, folders, the
    /// ledger, connection limits, budgets): a change waits for the next start.
    static let restartKeys: [(name: String, changed: @Sendable (DaemonConfiguration, DaemonConfiguration) -> Bool)] = [
        ("socket", { $0.socket != $1.socket }),
        ("state_directory", { $0.stateDirectory != $1.stateDirectory }),
        ("containers_directory", { $0.containersDirectory != $1.containersDirectory }),
        ("handlers_directory", { $0.handlersDirectory != $1.handlersDirectory }),
        ("quarantine_directory", { $0.quarantineDirectory != $1.quarantineDirectory }),
        ("max_unacknowledged", { $0.maxUnacknowledged != $1.maxUnacknowledged }),
        ("max_connections", { $0.maxConnections != $1.maxConnections }),
        ("max_connections_per_uid", { $0.maxConnectionsPerUID != $1.maxConnectionsPerUID }),
        ("reserved_handler_connections", { $0.reservedHandlerConnections != $1.reservedHandlerConnections }),
        ("idle_timeout", { $0.idleTimeoutSeconds != $1.idleTimeoutSeconds }),
        ("max_unfinished_line_bytes", { $0.maxUnfinishedLineBytes != $1.maxUnfinishedLineBytes }),
        ("metrics_textfile", { $0.metricsTextfile != $1.metricsTextfile }),
        ("max_package_depth", { $0.maxPackageDepth != $1.maxPackageDepth }),
        ("max_package_entries", { $0.maxPackageEntries != $1.maxPackageEntries }),
        ("launch_flag_directory", { $0.launchFlagDirectory != $1.launchFlagDirectory }),
        ("open_requests_per_minute", { $0.openRequestsPerMinute != $1.openRequestsPerMinute }),
        ("open_bytes_per_minute", { $0.openBytesPerMinute != $1.openBytesPerMinute }),
        ("max_pending_per_handler", { $0.maxPendingPerHandler != $1.maxPendingPerHandler }),
        ("max_pending_bytes_per_handler", { $0.maxPendingBytesPerHandler != $1.maxPendingBytesPerHandler }),
        ("max_pending_per_uid", { $0.maxPendingPerUID != $1.maxPendingPerUID }),
        ("max_pending_bytes_per_uid", { $0.maxPendingBytesPerUID != $1.maxPendingBytesPerUID }),
        ("limit_root", { $0.limitRoot != $1.limitRoot }),
        ("history_days", { $0.historyDays != $1.historyDays }),
        // The database connection, the host's name and its lease are set up once, at start.
        ("fleet", { $0.fleet != $1.fleet }),
    ]

    /// This running configuration updated from `file`, the configuration file read again.
    package func reloaded(from file: DaemonConfiguration) -> Reload {
        var next = self
        var reload = Reload(configuration: self)
        for key in Self.liveKeys where key.changed(self, file) {
            key.take(&next, file)
            reload.applied.append(key.name)
        }
        reload.needsRestart = Self.restartKeys.filter { $0.changed(self, file) }.map(\.name)
        var matched: Set<String> = []
        for (index, inbox) in inboxes.enumerated() where !inbox.retired {
            guard let wanted = file.inboxes.first(where: { $0.path == inbox.path }), wanted.kind == inbox.kind else {
                // Gone, or another kind at the same path: this one retires; a new one is added below.
                next.inboxes[index].retired = true
                reload.retiredInboxes.append(index)
                continue
            }
            matched.insert(inbox.path)
            if wanted != inbox {
                next.inboxes[index] = wanted
                reload.changedInboxes.append(index)
            }
        }
        for inbox in file.inboxes where !matched.contains(inbox.path) {
            reload.addedInboxes.append(next.inboxes.count)
            next.inboxes.append(inbox)
        }
        if !(reload.addedInboxes.isEmpty && reload.retiredInboxes.isEmpty && reload.changedInboxes.isEmpty) {
            reload.applied.append("inbox")
        }
        reload.configuration = next
        return reload
    }

    /// The inboxes the daemon serves now (a reload retires, it never removes).
    package var servedInboxes: [(index: Int, inbox: InboxConfiguration)] {
        inboxes.enumerated().filter { !$0.element.retired }.map { ($0.offset, $0.element) }
    }
}
