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
    }

    /// The link at `index` is gone: so is what its lease said.
    func forgetLease(of index: Int) {
        meteredGuesses[index] = nil
        leases?.forget(index)
    }

    /// What the network guesses about the link: metered by its lease or by NetworkManager.
    func isMeteredGuess(_ facts: LinkFacts) -> Bool {
        (meteredGuesses[facts.index] ?? false) || networkManagerMetered.contains(facts.name)
    }

    /// What the DHCP lease of link `index` says about its cost; re-classifies that link when it
    /// changed. Returns at once: taken on `queue`.
    func setMeteredGuess(_ metered: Bool, index: Int) {
        queue.async { [self] in
            guard leases != nil, let link = table.links[index] else { return }
            let before = isMeteredGuess(link)
            meteredGuesses[index] = metered
            let detail = metered ? "DHCP lease asks for metered use (ANDROID_METERED)" : "DHCP lease no longer asks for metered use"
            log.info("\(link.name): \(detail)")
            guard isMeteredGuess(link) != before else { return }
            costChanged(of: [index], detail: detail)
        }
    }

    /// The interfaces NetworkManager calls metered (its devices' `Metered`: yes or guess-yes);
    /// re-classifies the links whose guess changed. On `queue` (the source runs on it).
    public func setNetworkManagerMetered(_ names: [String]) {
        onQueue {
            let next = Set(names)
            let moved = networkManagerMetered.symmetricDifference(next)
            guard !moved.isEmpty else { return }
            let before = Dictionary(uniqueKeysWithValues: table.links.map { ($0.key, isMeteredGuess($0.value)) })
            networkManagerMetered = next
            let changed = table.links.filter { moved.contains($0.value.name) && before[$0.key] != isMeteredGuess($0.value) }.map(\.key)
            guard !changed.isEmpty else { return }
            costChanged(of: changed, detail: "NetworkManager's metered guess changed")
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
