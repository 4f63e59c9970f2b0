import FoundationEssentials
import ReachabilityCore
import ReachabilityLinux

extension Daemon {
    /// NetworkManager on the system bus (`[Interfaces] NetworkManager=`), telling the monitor
    /// which interfaces it calls metered. Nothing waits for its answer: a guess that comes a
    /// moment after the first status is an event like any other.
    func startNetworkManager(monitor: ReachabilityMonitor) {
        reloadHooks.append { [weak self, weak monitor] file in
            guard let self, let monitor else { return }
            switch (file.interfaces.networkManager, self.networkManagerSource) {
            case (true, nil): self.startNetworkManagerSource(monitor: monitor)
            case (false, let source?): source.stop(); self.networkManagerSource = nil
            case (true, .some), (false, nil): break
            }
        }
        guard configuration.interfaces.networkManager else { return }
        startNetworkManagerSource(monitor: monitor)
    }

    private func startNetworkManagerSource(monitor: ReachabilityMonitor) {
        guard let systemBus else { return }
        let source = NetworkManagerMeteredSource(monitor: monitor, bus: systemBus, log: log)
        source.start()
        networkManagerSource = source
    }
}
