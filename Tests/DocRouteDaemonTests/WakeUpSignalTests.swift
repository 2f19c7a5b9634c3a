import Testing
@testable import DocRouteDelivery

/// The fleet's pause between looks for work: a poke ends it early, a poke while nobody waits is
/// kept for the next wait, the time running out ends it unpoked, and a late timer of one wait
/// never ends the next.
@Suite struct WakeUpSignalTests {
    @Test func aPokeWhileNobodyWaitsEndsTheNextWaitAtOnce() async {
        let signal = WakeUpSignal()
        signal.poke()
        // True only when poked: a wait that ran out would say false.
        #expect(await signal.sleep(upTo: .seconds(30)))
        // Kept once, not for good.
        #expect(await !signal.sleep(upTo: .milliseconds(50)))
    }

    @Test func aPokeEndsAWaitInProgress() async {
        let signal = WakeUpSignal()
        async let poked = signal.sleep(upTo: .seconds(30))
        try? await Task.sleep(for: .milliseconds(100))
        signal.poke()
        #expect(await poked, "ended by the poke, not by the 30 s running out")
    }

    @Test func theTimeRunningOutEndsAWaitUnpokedAndALateTimerNoOther() async {
        let signal = WakeUpSignal()
        for _ in 0..<20 {
            #expect(await !signal.sleep(upTo: .milliseconds(1)))
        }
        let clock = ContinuousClock()
        let started = clock.now
        #expect(await !signal.sleep(upTo: .milliseconds(300)))
        #expect(clock.now - started >= .milliseconds(250), "an earlier wait's timer ended this one early")
    }

    @Test func cancellingTheWaitingTaskEndsTheWait() async {
        let signal = WakeUpSignal()
        let waiting = Task { await signal.sleep(upTo: .seconds(30)) }
        try? await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        #expect(await waiting.value)
    }
}
