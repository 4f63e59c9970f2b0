import Dispatch
import ReachabilityCore

// What the network says about a link's cost: systemd-networkd's DHCP lease (`ANDROID_METERED`)
// and NetworkManager's `Metered`, guesses that `[Interfaces] Metered=` and `NotMetered=` override
// (see `LinkVerdict`).
extension ReachabilityMonitor {
    /// Starts reading leases from the configured directory (again, after a change of it), every
    /// link's at once. On `queue`.
    func startLeaseWatcher() {
        stopLeaseWatcher()
        let watcher = DHCPLeaseWatcher(directory: configuration.interfaces.leaseDirectory, log: log) { [weak self] index, metered in
            self?.setMeteredGuess(metered, index: index)
        }
        leases = watcher
        watcher.refresh(Array(table.links.keys))
    }

    /// What the leases said is forgotten with the watcher: a new one reports only changes from
    /// nothing known.
    func stopLeaseWatcher() {
        leases?.stop()
        leases = nil
        meteredGuesses = [:]
        costFlips.forgetAll()
    }

    /// The link at `index` is gone: so is what its lease said.
    func forgetLease(of index: Int) {
        meteredGuesses[index] = nil
        costFlips.forget(index)
        leases?.forget(index)
    }

    /// What the network guesses about the link, as subscribers were last shown it: a flip
    /// within a second of the last one waits (`CostFlipMerger`).
    func isMeteredGuess(_ facts: LinkFacts) -> Bool {
        costFlips.shown(facts.index) ?? rawMeteredGuess(facts)
    }

    /// What the network guesses now: metered by its lease or by NetworkManager.
    private func rawMeteredGuess(_ facts: LinkFacts) -> Bool {
        (meteredGuesses[facts.index] ?? false) || networkManagerMetered.contains(facts.name)
    }

    /// What the DHCP lease of link `index` says about its cost; re-classifies that link when it
    /// changed. Returns at once: taken on `queue`.
    func setMeteredGuess(_ metered: Bool, index: Int) {
        queue.async { [self] in
            guard leases != nil, let link = table.links[index] else { return }
            let shown = isMeteredGuess(link)
            meteredGuesses[index] = metered
            let detail = metered ? "DHCP lease asks for metered use (ANDROID_METERED)" : "DHCP lease no longer asks for metered use"
            // Every change of the lease goes through the merger, if only for its rate-limited log line.
            performCostFlips(costFlips.guessChanged(index: index, metered: rawMeteredGuess(link), shown: shown, detail: detail, now: clock.now().uptime))
        }
    }

    /// The interfaces NetworkManager calls metered (its devices' `Metered`: yes or guess-yes);
    /// re-classifies the links whose guess changed. On `queue` (the source runs on it).
    public func setNetworkManagerMetered(_ names: [String]) {
        onQueue {
            let next = Set(names)
            let moved = networkManagerMetered.symmetricDifference(next)
            guard !moved.isEmpty else { return }
            let affected = table.links.values.filter { moved.contains($0.name) }.sorted { $0.index < $1.index }
            let before = affected.map { (shown: isMeteredGuess($0), raw: rawMeteredGuess($0)) }
            networkManagerMetered = next
            let now = clock.now().uptime
            for (link, before) in zip(affected, before) where rawMeteredGuess(link) != before.raw {
                performCostFlips(costFlips.guessChanged(index: link.index, metered: rawMeteredGuess(link), shown: before.shown,
                                                        detail: "NetworkManager's metered guess changed", now: now))
            }
        }
    }

    /// Performs what `CostFlipMerger` decided. On `queue`.
    private func performCostFlips(_ actions: [CostFlipMerger.Action]) {
        for action in actions {
            switch action {
            case .show(let index, _, let detail):
                costChanged(of: [index], detail: detail)
            case .arm(let index, let seconds):
                queue.asyncAfter(deadline: .now() + seconds) { [weak self] in
                    guard let self else { return }
                    performCostFlips(costFlips.intervalEnded(index: index, now: clock.now().uptime))
                }
            case .log(let index, let detail, let suppressed):
                let name = table.links[index]?.name ?? "link \(index)"
                log.info("\(name): \(detail)" + (suppressed > 0 ? " (\(suppressed) flips since the last line not logged)" : ""))
            }
        }
    }

    private func costChanged(of indexes: [Int], detail: String) {
        let now = clock.now()
        for index in indexes.sorted() {
            linkVerdicts[index] = nil
            let reason = Reason(code: .costChanged, interface: table.links[index]?.name, detail: detail)
            perform(scheduler.linkCostChanged(index: index, reason: reason, now: now), now: now)
        }
    }
}
