import ReachabilityCore

extension ConnectivityChecker {
    /// The machine is about to sleep: the running check is cancelled and the timer disarmed, and
    /// no check runs until `resume()`; a verdict from before the sleep would say nothing about
    /// the network after it. `Probe()` calls made meanwhile wait for the check after wake (those
    /// already waiting are answered `disabled`). Publishes nothing: the monitor's
    /// `prepareForSleep()` drops the verdict. `completion` runs on the checker's queue once no
    /// verdict can reach the monitor any more.
    public func suspend(completion: @escaping @Sendable () -> Void = {}) {
        queue.async { [self] in
            if !suspended {
                suspended = true
                perform(scheduler.stop())
                // The monitor forgets the standby verdicts itself, in the sleeping event.
                performStandby(standby.scheduler.stop().filter {
                    if case .publish = $0 { false } else { true }
                })
            }
            completion()
        }
    }

    /// Awake again: a fresh check of the path the monitor has now, at once, whatever the last
    /// verdict was; the requests held while suspended share it. `prepare` runs first, on the
    /// checker's queue (the monitor's re-read): in order after what `suspend` ran, however
    /// quickly the wake follows the sleep.
    public func resume(prepare: @escaping @Sendable () -> Void = {}) {
        queue.async { [self] in
            prepare()
            guard suspended else { return }
            suspended = false
            perform(scheduler.start(path: ProbePath(target.status), now: clock.now()))
            let held = heldRequests
            heldRequests = []
            for request in held { perform(scheduler.probeRequested(request, now: clock.now())) }
            standby.lastPath = ProbePath(target.status)
            performStandby(standby.scheduler.uplinksChanged(standbyCandidates()))
        }
    }
}
