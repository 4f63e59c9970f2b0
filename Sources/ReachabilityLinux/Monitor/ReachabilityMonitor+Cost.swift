import ReachabilityCore

// What the network says about a link's cost: systemd-networkd's DHCP lease (`ANDROID_METERED`)
// and NetworkManager's `Metered`. The core keeps and weighs the hints (`MonitorCore+Cost`); the
// monitor reads the leases.
extension ReachabilityMonitor {
    /// Starts reading leases from the configured directory (again, after a change of it), every
    /// link's at once. On `queue`.
    func startLeaseWatcher() {
        leases?.stop()
        let watcher = DHCPLeaseWatcher(directory: config.interfaces.leaseDirectory, log: log) { [weak self] index, metered in
            self?.setMeteredGuess(metered, index: index)
        }
        leases = watcher
        perform(core.leasesRestarted())
    }

    /// What the DHCP lease of link `index` says about its cost; re-classifies that link when it
    /// changed. Returns at once: taken on `queue`.
    func setMeteredGuess(_ metered: Bool, index: Int) {
        queue.async { [self] in
            guard leases != nil else { return }
            perform(core.leaseMetered(metered, index: index, now: clock.now()))
        }
    }

    /// The interfaces NetworkManager calls metered (its devices' `Metered`: yes or guess-yes);
    /// re-classifies the links whose guess changed. On `queue` (the source runs on it).
    public func setNetworkManagerMetered(_ names: [String]) {
        onQueue { perform(core.networkManagerMetered(names, now: clock.now())) }
    }
}
