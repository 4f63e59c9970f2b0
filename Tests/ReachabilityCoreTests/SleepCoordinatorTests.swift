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
        #expect(s.prepareForSleep(true, sender: ":1.5") == [.prepareForSleep])
        #expect(s.holdsInhibitor)                        // held until the status is out
        #expect(s.sleepPrepared() == [.releaseInhibitor])
        #expect(!s.holdsInhibitor)
        #expect(s.prepareForSleep(false, sender: ":1.5") == [.resume, .takeInhibitor])
        #expect(s.inhibitorTaken() == [])
        #expect(s.holdsInhibitor && !s.sleeping)
    }

    /// A peer that is not logind's current owner sends PrepareForSleep: nothing happens, in
    /// either direction, and before logind is known at all.
    @Test func onlyTheOwnerIsBelieved() {
        var s = SleepCoordinator()
        #expect(s.prepareForSleep(true, sender: ":1.9") == [])
        _ = s.ownerChanged(to: ":1.5")
        _ = s.inhibitorTaken()
        #expect(s.prepareForSleep(true, sender: ":1.9") == [])
        #expect(s.prepareForSleep(true, sender: nil) == [])
        #expect(!s.sleeping && s.holdsInhibitor)
        _ = s.prepareForSleep(true, sender: ":1.5")
        _ = s.sleepPrepared()
        #expect(s.prepareForSleep(false, sender: ":1.9") == [])
        #expect(s.sleeping)
    }

    /// Repeated signals change nothing; a wake before the sleep was prepared (a cancelled
    /// sleep) resumes and keeps the inhibitor it still holds.
    @Test func repeatsAndACancelledSleep() {
        var s = SleepCoordinator()
        _ = s.ownerChanged(to: ":1.5")
        _ = s.inhibitorTaken()
        #expect(s.prepareForSleep(false, sender: ":1.5") == [])
        #expect(s.prepareForSleep(true, sender: ":1.5") == [.prepareForSleep])
        #expect(s.prepareForSleep(true, sender: ":1.5") == [])
        #expect(s.prepareForSleep(false, sender: ":1.5") == [.resume])
        #expect(s.sleepPrepared() == [])
        #expect(s.holdsInhibitor)
    }

    /// logind goes away while the machine is said to sleep: no `false` will come, so reachd
    /// wakes; a new logind gets a new inhibitor.
    @Test func logindLeavingEndsTheSleep() {
        var s = SleepCoordinator()
        _ = s.ownerChanged(to: ":1.5")
        _ = s.inhibitorTaken()
        _ = s.prepareForSleep(true, sender: ":1.5")
        #expect(s.ownerChanged(to: nil) == [.releaseInhibitor, .resume])
        #expect(s.sleepPrepared() == [])
        #expect(s.ownerChanged(to: ":1.7") == [.takeInhibitor])
        #expect(s.inhibitorTaken() == [])
        #expect(s.prepareForSleep(true, sender: ":1.5") == [])
    }

    /// Without a lock (logind refused one) sleep is still followed, without delaying it.
    @Test func withoutAnInhibitor() {
        var s = SleepCoordinator()
        _ = s.ownerChanged(to: ":1.5")
        s.inhibitorFailed()
        #expect(s.prepareForSleep(true, sender: ":1.5") == [.prepareForSleep])
        #expect(s.sleepPrepared() == [])
        #expect(s.prepareForSleep(false, sender: ":1.5") == [.resume, .takeInhibitor])
    }
}
