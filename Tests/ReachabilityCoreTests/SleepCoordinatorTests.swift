import Testing
@testable import ReachabilityCore

@Suite struct SleepCoordinatorTests {
    /// logind appears, the machine sleeps and wakes: the inhibitor is taken, released once the
    /// sleeping status is published (not before), and taken again after wake.
    @Test func sleepAndWake() {
        var s = SleepCoordinator()
        #expect(s.ownerChanged(to: ":1.5") == [.takeInhibitor])
        #expect(s.inhibitorTaken() == [])
        #expect(s.holdsInhibitor)
        #expect(s.prepareForSleep(true, sender: ":1.5", now: 0) == [.prepareForSleep, .armSleepLimit(seconds: 120)])
        #expect(s.holdsInhibitor)                        // held until the status is out
        #expect(s.sleepPrepared() == [.releaseInhibitor])
        #expect(!s.holdsInhibitor)
        #expect(s.prepareForSleep(false, sender: ":1.5", now: 0) == [.resume, .takeInhibitor])
        #expect(s.inhibitorTaken() == [])
        #expect(s.holdsInhibitor && !s.sleeping)
    }

    /// A peer that is not logind's current owner sends PrepareForSleep: nothing happens, in
    /// either direction, and before logind is known at all.
    @Test func onlyTheOwnerIsBelieved() {
        var s = SleepCoordinator()
        #expect(s.prepareForSleep(true, sender: ":1.9", now: 0) == [])
        _ = s.ownerChanged(to: ":1.5")
        _ = s.inhibitorTaken()
        #expect(s.prepareForSleep(true, sender: ":1.9", now: 0) == [])
        #expect(s.prepareForSleep(true, sender: nil, now: 0) == [])
        #expect(!s.sleeping && s.holdsInhibitor)
        _ = s.prepareForSleep(true, sender: ":1.5", now: 0)
        _ = s.sleepPrepared()
        #expect(s.prepareForSleep(false, sender: ":1.9", now: 0) == [])
        #expect(s.sleeping)
    }

    /// Repeated signals change nothing; a wake before the sleep was prepared (a cancelled
    /// sleep) resumes and keeps the inhibitor it still holds.
    @Test func repeatsAndACancelledSleep() {
        var s = SleepCoordinator()
        _ = s.ownerChanged(to: ":1.5")
        _ = s.inhibitorTaken()
        #expect(s.prepareForSleep(false, sender: ":1.5", now: 0) == [])
        #expect(s.prepareForSleep(true, sender: ":1.5", now: 0) == [.prepareForSleep, .armSleepLimit(seconds: 120)])
        #expect(s.prepareForSleep(true, sender: ":1.5", now: 0) == [])
        #expect(s.prepareForSleep(false, sender: ":1.5", now: 0) == [.resume])
        #expect(s.sleepPrepared() == [])
        #expect(s.holdsInhibitor)
    }

    /// logind goes away while the machine is said to sleep: no `false` will come, so reachd
    /// wakes; a new logind gets a new inhibitor.
    @Test func logindLeavingEndsTheSleep() {
        var s = SleepCoordinator()
        _ = s.ownerChanged(to: ":1.5")
        _ = s.inhibitorTaken()
        _ = s.prepareForSleep(true, sender: ":1.5", now: 0)
        #expect(s.ownerChanged(to: nil) == [.releaseInhibitor, .resume])
        #expect(s.sleepPrepared() == [])
        #expect(s.ownerChanged(to: ":1.7") == [.takeInhibitor])
        #expect(s.inhibitorTaken() == [])
        #expect(s.prepareForSleep(true, sender: ":1.5", now: 0) == [])
    }

    /// Without a lock (logind refused one) sleep is still followed, without delaying it.
    @Test func withoutAnInhibitor() {
        var s = SleepCoordinator()
        _ = s.ownerChanged(to: ":1.5")
        s.inhibitorFailed()
        #expect(s.prepareForSleep(true, sender: ":1.5", now: 0) == [.prepareForSleep, .armSleepLimit(seconds: 120)])
        #expect(s.sleepPrepared() == [])
        #expect(s.prepareForSleep(false, sender: ":1.5", now: 0) == [.resume, .takeInhibitor])
    }

    /// A sleep with no `false` for the limit (monotonic time, injected) is a wake: the check
    /// resumes and the inhibitor is taken again. A timer that fires early is armed again for
    /// what is left; a late `false` from logind then changes nothing.
    @Test func aSleepThatNeverEndsEnds() {
        var s = SleepCoordinator(sleepLimit: 120)
        _ = s.ownerChanged(to: ":1.5")
        _ = s.inhibitorTaken()
        #expect(s.prepareForSleep(true, sender: ":1.5", now: 1000) == [.prepareForSleep, .armSleepLimit(seconds: 120)])
        #expect(s.sleepPrepared() == [.releaseInhibitor])
        #expect(s.sleepLimitReached(now: 1090) == [.armSleepLimit(seconds: 30)])
        #expect(s.sleeping)
        #expect(s.sleepLimitReached(now: 1120) == [.resume, .takeInhibitor])
        #expect(!s.sleeping && s.sleepStarted == nil)
        #expect(s.inhibitorTaken() == [])
        #expect(s.prepareForSleep(false, sender: ":1.5", now: 1130) == [])
        #expect(s.sleepLimitReached(now: 1300) == [])
        #expect(s.holdsInhibitor)
    }

    /// A sleep that ended in time leaves its timer nothing to do, even when a second sleep has
    /// begun meanwhile: that one is measured from its own start.
    @Test func anEndedSleepsTimerDoesNothing() {
        var s = SleepCoordinator(sleepLimit: 5)
        _ = s.ownerChanged(to: ":1.5")
        _ = s.inhibitorTaken()
        _ = s.prepareForSleep(true, sender: ":1.5", now: 0)
        _ = s.sleepPrepared()
        _ = s.prepareForSleep(false, sender: ":1.5", now: 2)
        _ = s.inhibitorTaken()
        #expect(s.prepareForSleep(true, sender: ":1.5", now: 3) == [.prepareForSleep, .armSleepLimit(seconds: 5)])
        // The first sleep's timer, due at 5.
        #expect(s.sleepLimitReached(now: 5) == [.armSleepLimit(seconds: 3)])
        #expect(s.sleeping)
        #expect(s.sleepLimitReached(now: 8) == [.resume])   // the lock was never released: still held
        #expect(s.holdsInhibitor)
    }

    /// logind leaving ends the sleep and its limit with it.
    @Test func ownerLeavingClearsTheLimit() {
        var s = SleepCoordinator(sleepLimit: 5)
        _ = s.ownerChanged(to: ":1.5")
        _ = s.prepareForSleep(true, sender: ":1.5", now: 0)
        _ = s.ownerChanged(to: nil)
        #expect(s.sleepStarted == nil)
        #expect(s.sleepLimitReached(now: 10) == [])
    }
}
