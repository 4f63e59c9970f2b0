import ReachabilityCore

extension ReachabilityMonitor {
    /// The machine is about to sleep: the checker's verdict and the standby verdicts are
    /// dropped, so connectivity is `unknown` (reason `sleeping`) until a check after wake says
    /// otherwise. Returns when the event, if the status changed, has been handed to every
    /// observer (the varlink server among them): only then may the sleep go on. Stop the
    /// checker first, so that no verdict from before the sleep arrives after this (one that
    /// does is dropped: until the wake no verdict counts).
    public func prepareForSleep() {
        onQueue { perform(core.sleep(now: clock.now())) }
    }

    /// The machine woke: links, addresses, routes and rules are read again whole, as after an
    /// overrun (what changed while asleep sent no message anyone read in time), and the
    /// difference is reported with reason `resumed`. Connectivity stays `unknown` until the
    /// verdict of a check that began after this. When nothing changed and `awaitingCheck`, the
    /// first event of such a verdict is the one that carries `resumed`.
    public func resumed(awaitingCheck: Bool) {
        onQueue { perform(core.wake(awaitingCheck: awaitingCheck, now: clock.now())) }
    }
}
