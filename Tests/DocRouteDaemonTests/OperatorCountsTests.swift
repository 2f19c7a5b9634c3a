@testable import DocRouteConfiguration
@testable import DocRouteIntake
@testable import DocRouteLedger
@testable import DocRouteOperations
@testable import DocRoutePlatform
import DocRouteProtocol
import DocRouteTestSupport
import Foundation
import Logging
import Testing

/// The counts behind `status` and the metrics: progress with rate and estimate, the ledger tally,
/// the Prometheus text.
@Suite struct OperatorCountsTests {
    typealias Instant = ContinuousClock.Instant
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> Instant { start.advanced(by: .milliseconds(milliseconds)) }

    @Test func progressRateFollowsTheLastSecondsAndEstimatesTheRest() {
        var progress = ProgressTracker<Instant>(phase: "scan", total: 10_000, at: at(0))
        #expect(progress.estimatedSecondsLeft(at: at(0)) == nil, "no rate yet, no estimate")
        // 1,000 a second for 10 s.
        for tick in 1...40 { progress.finish(250, at: at(tick * 250)) }
        #expect(progress.done == 10_000)
        #expect(progress.isFinished)

        var slow = ProgressTracker<Instant>(phase: "scan", total: 10_000, at: at(0))
        // Fast at first (4,000 in 2 s), then 100 a second for 10 s: the rate is the recent one.
        for tick in 1...8 { slow.finish(500, at: at(tick * 250)) }
        for tick in 1...40 { slow.finish(25, at: at(2_000 + tick * 250)) }
        #expect(slow.done == 5_000)
        let rate = slow.rate(at: at(12_000))
        #expect(abs(rate - 100) < 1, "rate \(rate)")
        let left = slow.estimatedSecondsLeft(at: at(12_000)) ?? 0
        #expect(abs(left - 50) < 1, "5,000 left at 100/s: \(left) s")
    }

    @Test func progressTotalGrowsWithArrivalsAndDoneNeverPassesIt() {
        var progress = ProgressTracker<Instant>(phase: "intake", at: at(0))
        progress.add(3)
        progress.finish(5, at: at(100))
        #expect(progress.done == 3)
        progress.add()
        #expect(!progress.isFinished)
    }

    @Test func tallyMovesWithCommitsAndAcknowledgementsAndRollsOverAtMidnight() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        let evening = Date(timeIntervalSince1970: 1_700_000_000 - 1_700_000_000.truncatingRemainder(dividingBy: 86_400) + 23 * 3_600)
        let seeded = LedgerStatistics(counts: ["com.example.a": [.committed: 2, .acknowledged: 5]],
                                               deliveredTodayByHandler: ["com.example.a": 4])
        var tally = LedgerTally(statistics: seeded, now: evening, days: .calendar(calendar))
        tally.committed("com.example.a", at: evening)
        tally.acknowledged("com.example.a", handled: true)
        tally.acknowledged("com.example.a", handled: false)
        #expect(tally.counts["com.example.a"] == [.committed: 1, .acknowledged: 6, .declined: 1])
        #expect(tally.deliveredToday("com.example.a", at: evening) == 5)
        let morning = evening.addingTimeInterval(2 * 3_600)
        #expect(tally.deliveredToday("com.example.a", at: morning) == 0, "a new day starts at zero even before a commit")
        tally.committed("com.example.b", at: morning)
        #expect(tally.deliveredToday(at: morning) == 1)
    }

    /// The tally keeps its day's end instead of asking the calendar at each commit: a day of 23
    /// hours (clocks forward) still ends at local midnight, and a clock set back starts over.
    @Test func tallyDaysEndAtLocalMidnightAcrossAClockChange() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "Europe/Berlin"))
        // 2026-03-29, the day clocks go forward in Berlin: 00:30 local is 23:30 UTC the day before.
        let start = try #require(calendar.date(from: DateComponents(year: 2026, month: 3, day: 29, hour: 0, minute: 30)))
        var tally = LedgerTally(statistics: nil, now: start, days: .calendar(calendar))
        tally.committed("com.example.a", at: start)
        let lateThatDay = try #require(calendar.date(from: DateComponents(year: 2026, month: 3, day: 29, hour: 23, minute: 59)))
        tally.committed("com.example.a", at: lateThatDay)
        #expect(tally.deliveredToday("com.example.a", at: lateThatDay) == 2)
        let nextMorning = lateThatDay.addingTimeInterval(120)
        tally.committed("com.example.a", at: nextMorning)
        #expect(tally.deliveredToday("com.example.a", at: nextMorning) == 1)
        // The clock set back a day: that day starts over too.
        tally.committed("com.example.a", at: start)
        #expect(tally.deliveredToday("com.example.a", at: start) == 1)
        #expect(tally.counts["com.example.a"] == [.committed: 4])
    }

    @Test func metricsRenderAsPrometheusTextWithTheExpectedValues() throws {
        let metrics = DeliveryMetrics()
        metrics.delivery(handler: "com.example.a", outcome: .delivered, bytes: 5_120, latency: .milliseconds(30))
        metrics.delivery(handler: "com.example.a", outcome: .delivered, bytes: 100, latency: .milliseconds(2))
        metrics.delivery(handler: "com.example.a", outcome: .retrying)
        metrics.acknowledgement(handler: "com.example.a", handled: false, latency: .milliseconds(7))
        metrics.quarantine(reason: DeliveryMetrics.quarantineReason(for: "no handler claims public.data (conforms to public.item); install one or set a default"))
        metrics.rescan(.overflow)
        metrics.intakeWaiting(12)
        metrics.unacknowledged(handler: "com.example.a", 3)
        let text = String(decoding: metrics.render(), as: UTF8.self)
        let samples = try PrometheusText.parse(text)
        #expect(samples[#"docroute_deliveries_total{handler="com.example.a",outcome="delivered"}"#] == 2)
        #expect(samples[#"docroute_deliveries_total{handler="com.example.a",outcome="retrying"}"#] == 1)
        #expect(samples[#"docroute_delivered_bytes_total{handler="com.example.a"}"#] == 5_220)
        #expect(samples[#"docroute_acknowledgements_total{handler="com.example.a",outcome="declined"}"#] == 1)
        #expect(samples[#"docroute_quarantined_total{reason="no_handler"}"#] == 1)
        #expect(samples[#"docroute_rescans_total{reason="overflow"}"#] == 1)
        #expect(samples[#"docroute_rescans_total{reason="startup"}"#] == 0)
        #expect(samples["docroute_intake_waiting"] == 12)
        #expect(samples[#"docroute_unacknowledged{handler="com.example.a"}"#] == 3)
        #expect(samples["docroute_delivery_latency_seconds_count"] == 2)
        #expect(samples[#"docroute_delivery_latency_seconds_bucket{le="0.005"}"#] == 1)
        #expect(samples[#"docroute_delivery_latency_seconds_bucket{le="0.05"}"#] == 2)
        #expect(abs((samples["docroute_delivery_latency_seconds_sum"] ?? 0) - 0.032) < 1e-9)
        #expect(samples[#"docroute_ack_latency_seconds_count{handler="com.example.a"}"#] == 1)
    }

    @Test func quarantineReasonsAreABoundedSet() {
        #expect(DeliveryMetrics.quarantineReason(for: "not delivered: it has 2 hard links, so whoever dropped it may not own its content") == "hard_link")
        #expect(DeliveryMetrics.quarantineReason(for: "not delivered: \(IntakeFile.Refusal.tooLarge(size: 9, limit: 1))") == "too_large")
        #expect(DeliveryMetrics.quarantineReason(for: "not delivered: \(IntakeFile.Refusal.symbolicLink)") == "symbolic_link")
        #expect(DeliveryMetrics.quarantineReason(for: "not delivered: \(IntakeFile.Refusal.notRegularFile("FIFO"))") == "not_regular_file")
        #expect(DeliveryMetrics.quarantineReason(for: "something new") == "other")
    }

    @Test func activityCountsWaitingFilesAndShowsAScanAsProgress() throws {
        var configuration = try DaemonConfiguration.parse("[[inbox]]\npath = \"/srv/a\"\n[[inbox]]\npath = \"/srv/b\"\n", file: "test")
        configuration.metricsTextfile = nil
        let activity = DaemonActivity(configuration: configuration, logger: Logger(label: "test"))
        let root = WatchedFolder(inbox: 1, mailbox: nil, path: "/srv/b")
        let arrivals = (0..<4).map { ArrivalQueue.Arrival(folder: root, name: Array("f\($0)".utf8)) }
        for arrival in arrivals { activity.queued(arrival) }
        activity.rescanned(.startup)
        #expect(activity.inboxFields(1)["waiting"] == .integer(4))
        #expect(activity.inboxFields(0)["waiting"] == .integer(0))
        let progress = try #require(activity.progress())
        #expect(progress.phase == "scan")
        #expect(progress.total == 4 && progress.done == 0)
        // Done when delivered or quarantined, not merely taken off the queue.
        activity.settled(Array(arrivals.prefix(3)))
        #expect(activity.progress()?.done == 0)
        for arrival in arrivals.prefix(3) { activity.quarantined(inbox: 1, reason: "no handler claims public.data", arrival: arrival) }
        #expect(activity.inboxFields(1) == ["waiting": .integer(1), "quarantined": .integer(3),
                                            "watchedFolders": .integer(0), "maxMailboxes": .integer(1_000)])
        // Folders past max_mailboxes are counted where an operator looks.
        activity.foldersWatched(inbox: 1, count: 1_000, notServed: 7)
        #expect(activity.inboxFields(1)["foldersNotServed"] == .integer(7))
        #expect(activity.inboxFields(1)["watchedFolders"] == .integer(1_000))
        #expect(activity.progress()?.done == 3)
        // Listed again before its source left the inbox: the same file, counted once.
        activity.queued(arrivals[0])
        #expect(activity.progress()?.total == 4)
        activity.quarantined(inbox: 1, reason: "no handler claims public.data", arrival: arrivals[0])
        #expect(activity.progress()?.done == 3)
        activity.settled([arrivals[0]])
        activity.settled([arrivals[3]])
        #expect(activity.progress() == nil, "nothing waiting, nothing to show")
        #expect(activity.statusFields()["progress"] == nil)
    }

    @Test func activityTracksInFlightEventsLastErrorsAndABacklogDrain() throws {
        let configuration = try DaemonConfiguration.parse("", file: "test")
        let activity = DaemonActivity(configuration: configuration, logger: Logger(label: "test"))
        activity.seed(LedgerStatistics(counts: ["com.example.a": [.committed: 3]], deliveredTodayByHandler: ["com.example.a": 3]))
        activity.subscribed("com.example.a", pending: 3)
        for id in ["1", "2", "3"] { activity.sent("com.example.a", deliveryID: id) }
        activity.acknowledged("com.example.a", deliveryID: "1", handled: true)
        let drain = try #require(activity.progress())
        #expect(drain.phase == "drain" && drain.handler == "com.example.a" && drain.done == 1 && drain.total == 3)
        activity.failed("com.example.a", "no-space: the disk is full")
        #expect(activity.handlerFields("com.example.a")["lastError"] == .string("no-space: the disk is full"))
        #expect(activity.handlerFields("com.example.a")["deliveredToday"] == .integer(3))
        activity.disconnected("com.example.a", deliveryIDs: ["2", "3"])
        #expect(activity.progress() == nil)
        let text = String(decoding: activity.metrics.render(), as: UTF8.self)
        let samples = try PrometheusText.parse(text)
        #expect(samples[#"docroute_unacknowledged{handler="com.example.a"}"#] == 0)
        #expect(samples[#"docroute_acknowledgements_total{handler="com.example.a",outcome="handled"}"#] == 1)
        guard case .object(let ledger)? = activity.statusFields()["ledger"], case .object(let entry)? = ledger["com.example.a"] else {
            Issue.record("no ledger entry")
            return
        }
        #expect(entry["committed"] == .integer(2))
        #expect(entry["acknowledged"] == .integer(1))
    }
}
