import Dispatch
import FoundationEssentials
import ReachabilityCore

extension ConnectivityChecker {
    /// The standby check's state, on the checker's queue: its scheduler, its running checks and
    /// timers, and threads and a resolver of its own, so that however many uplinks it checks
    /// the primary's check always finds a thread free.
    final class StandbyChecks {
        var scheduler: StandbyScheduler
        var running: [Int: HTTPProbe.Handle] = [:]
        /// When each running check began (boot time), by id; and when the check of each
        /// uplink's verdict began, by index (a failover shows that verdict as the primary's).
        var began: [Int: TimeInterval] = [:]
        var verdictBegan: [Int: TimeInterval] = [:]
        var timers: [Int: DispatchSourceTimer] = [:]
        /// The primary path last seen: a change of it is a failover.
        var lastPath: ProbePath?
        let pool = WorkerPool(name: "reachd-standby", threads: 2, maxQueued: 8, eager: false)
        let resolverPool = WorkerPool(name: "reachd-standby-dns", threads: 2, maxQueued: 8, eager: false)
        var resolver: HostResolver

        init(configuration: Configuration, networkNamespace: String?) {
            scheduler = StandbyScheduler(configuration: configuration)
            resolver = ConnectivityChecker.resolver(timeout: configuration.timeoutSeconds, networkNamespace: networkNamespace,
                                                    pool: resolverPool)
        }

        func reconfigure(_ configuration: Configuration, networkNamespace: String?) {
            resolver = ConnectivityChecker.resolver(timeout: configuration.timeoutSeconds, networkNamespace: networkNamespace,
                                                    pool: resolverPool)
        }
    }

    /// The target's standby uplinks (none when it cannot tell).
    func standbyCandidates() -> [StandbyUplink] {
        (target as? any StandbyProbeTarget)?.standbyUplinks ?? []
    }

    /// After every status (on `queue`): on a failover, the new primary's last standby verdict is
    /// shown at once (its `checkedAt` says how old it is) while the check of the new path runs;
    /// then the standby uplinks are brought up to date.
    func standbyStatusChanged(_ path: ProbePath?) {
        guard !suspended else { return }
        if path != standby.lastPath, let path, configuration.enabled,
           let known = standby.scheduler.verdict(index: path.index, path: path) {
            log.info("failover to \(path.interface): its standby verdict \(known.result.rawValue) is shown until the check of the new path answers")
            target.setProbe(known, path: path, began: standby.verdictBegan[path.index])
        }
        standby.lastPath = path
        // With nothing to check on standby the candidates are not worked out at every event.
        performStandby(standby.scheduler.uplinksChanged(standby.scheduler.wantsCandidates ? standbyCandidates() : []))
    }

    /// Performs the standby scheduler's actions (on `queue`); `began`: when the check whose
    /// verdict they may publish began (nil: now).
    func performStandby(_ actions: [StandbyScheduler.Action], began: TimeInterval? = nil) {
        for action in actions {
            switch action {
            case .startProbe(let id, let path):
                startStandbyProbe(id: id, path: path)
            case .cancelProbe(let id):
                standby.running.removeValue(forKey: id)?.cancel()
                standby.began[id] = nil
            case .schedule(let after, let timer):
                armStandby(after: after, timer: timer)
            case .cancelTimer(let timer):
                standby.timers.removeValue(forKey: timer)?.cancel()
            case .publish(let index, let probe):
                let began = began ?? clock.now().uptime
                standby.verdictBegan[index] = probe == nil ? nil : began
                (target as? any StandbyProbeTarget)?.setStandbyProbe(probe, index: index, began: began)
            }
        }
    }

    private func startStandbyProbe(id: Int, path: ProbePath) {
        let configuration = self.configuration, clock = self.clock
        let request: HTTPProbe.Request, api: HTTPProbe.Request?
        let began = clock.now().uptime
        switch Self.check(configuration, path: path, networkNamespace: networkNamespace, resolver: standby.resolver,
                          tls: sharedTLS(for: path), clock: clock) {
        case .verdict(let probe):
            queue.async { [self] in performStandby(standby.scheduler.probeCompleted(id: id, probe: probe), began: began) }
            return
        case .request(let made, let apiRequest):
            request = made
            api = apiRequest
        }
        let handle = HTTPProbe.Handle()
        standby.running[id] = handle
        standby.began[id] = began
        let finish: @Sendable (Probe) -> Void = { [weak self] probe in
            guard let self else { return }
            self.queue.async {
                guard self.standby.running.removeValue(forKey: id) != nil else { return }
                let began = self.standby.began.removeValue(forKey: id)
                self.logStandbyVerdict(probe, interface: path.interface)
                self.performStandby(self.standby.scheduler.probeCompleted(id: id, probe: probe), began: began)
            }
        }
        let busy: @Sendable () -> Probe = {
            Self.verdict(configuration, HTTPProbe.Result(outcome: .failure(ProbeFailure(.other, "no thread free to run the check")),
                                                         rttMs: nil), clock: clock)
        }
        let pool = standby.pool
        let submitted = pool.submit {
            Self.run(configuration, request: request, api: api, handle: handle, pool: pool, clock: clock) { finish($0 ?? busy()) }
        }
        if !submitted { finish(busy()) }
    }

    /// As the primary's: every verdict at debug, a failed check (no answer, or an URL that
    /// cannot be checked) at notice with the reason, so a standby uplink that cannot be used
    /// says why before it is needed.
    private func logStandbyVerdict(_ probe: Probe, interface: String) {
        switch probe.result {
        case .limited, .unknown:
            notice(.standbyCheckFailed, "standby check on \(interface) failed: \(probe.summary)")
        case .full, .portal, .none:
            log.debug("standby check on \(interface): \(probe.summary)")
        }
    }

    private func armStandby(after seconds: TimeInterval, timer id: Int) {
        standby.timers.removeValue(forKey: id)?.cancel()
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + .milliseconds(Int((seconds * 1000).rounded())))
        source.setEventHandler { [weak self] in
            guard let self, let timer = self.standby.timers.removeValue(forKey: id) else { return }
            timer.cancel()
            // The uplinks may have changed without an event (a route alone): look again first.
            self.performStandby(self.standby.scheduler.uplinksChanged(self.standbyCandidates()))
            self.performStandby(self.standby.scheduler.timerFired(id: id))
        }
        standby.timers[id] = source
        source.resume()
    }
}
