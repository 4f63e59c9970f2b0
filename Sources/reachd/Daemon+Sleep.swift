import ReachabilityCore
import ReachabilityLinux

extension Daemon {
    /// Follows logind's sleep and wake. Before sleep the check stops and connectivity becomes
    /// `unknown` (reason `sleeping`), published before the inhibitor goes, so whatever follows
    /// reachd (`reachd-internet.target`) is stopped while the network still works; after wake
    /// the links are re-read (reason `resumed`) and a fresh check decides connectivity.
    func startSleepFollowing(monitor: ReachabilityMonitor, checker: ConnectivityChecker) {
        guard let systemBus else { return }
        let sleepMonitor = LogindSleepMonitor(bus: systemBus, log: log, sleepLimit: configuration.monitor.sleepLimitSeconds, onSleep: { prepared in
            // The checker first: once it holds, no verdict from before the sleep can arrive.
            checker.suspend {
                monitor.prepareForSleep()
                prepared()
            }
        }, onWake: { [weak self] in
            let awaitingCheck = self?.configuration.connectivity.enabled ?? false
            // On the checker's queue, so never before a sleep's `sleeping` that is still on its way.
            checker.resume { monitor.resumed(awaitingCheck: awaitingCheck) }
        })
        sleepMonitor.start()
        self.sleepMonitor = sleepMonitor
    }
}
