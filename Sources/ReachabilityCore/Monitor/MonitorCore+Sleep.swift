import FoundationEssentials

// logind's sleep and wake: the verdicts dropped before, the kernel read again after.
extension MonitorCore {
    /// The machine is about to sleep: what waits for a timer is classified first, with its own
    /// reason; then the verdicts are dropped (connectivity `unknown`, reason `sleeping`) and none
    /// counts until the wake. Samples taken before the sleep are forgotten.
    public mutating func sleep(now: ClockReading) -> [Action] {
        var actions: [Action] = []
        // What the traffic showed before the sleep says nothing after it (the scheduler drops
        // the stalls shown with the verdicts).
        _ = stallDetector.reset()
        stallRechecks = []
        run(scheduler.sleep(now: now), now: now, into: &actions)
        return actions
    }

    /// The machine woke: the kernel is to be read again whole (`.rereadKernel`), and what the
    /// dump finds is classified with `resumed`. `awaitingCheck`: a fresh check follows, whose
    /// event carries `resumed` when the dump changed nothing.
    public mutating func wake(awaitingCheck: Bool, now: ClockReading) -> [Action] {
        var actions: [Action] = []
        run(scheduler.wake(awaitingCheck: awaitingCheck, now: now), now: now, into: &actions)
        return actions
    }
}
