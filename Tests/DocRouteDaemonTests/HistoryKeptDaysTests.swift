import Testing
@testable import DocRouteDaemon

/// How long a settled document's history stays: the retention sweep finds the copies it removes
/// by their ledger rows, so the history outlives the longest retention a handler asks for.
@Suite struct HistoryKeptDaysTests {
    @Test func historyDaysWhenNoHandlerKeepsCopiesLonger() {
        #expect(RoutingDaemon.historyKeptDays(historyDays: 30, retentionDays: []) == 30)
        #expect(RoutingDaemon.historyKeptDays(historyDays: 30, retentionDays: [7, 0.5]) == 30)
    }

    @Test func aLongerRetentionKeepsTheRowsUntilItsSweepHasRun() {
        #expect(RoutingDaemon.historyKeptDays(historyDays: 30, retentionDays: [7, 90]) == 91)
        #expect(RoutingDaemon.historyKeptDays(historyDays: 1, retentionDays: [1]) == 2)
    }
}
