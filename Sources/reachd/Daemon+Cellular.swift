import FoundationEssentials
import ReachabilityCore
import ReachabilityLinux

extension Daemon {
    /// ModemManager on the system bus (`[Cellular] ModemManager=`), feeding the monitor's modem
    /// facts. Waits briefly for ModemManager's first answer so that the first status (and READY=1)
    /// already knows the modems; an absent ModemManager or bus costs that wait once, not more.
    func startCellular(monitor: ReachabilityMonitor) {
        reloadHooks.append { [weak self, weak monitor] file in
            guard let self, let monitor else { return }
            switch (file.cellular.modemManager, self.modemSource) {
            case (true, nil): self.startModemManagerSource(monitor: monitor, wait: 0)
            case (false, let source?): source.stop(); self.modemSource = nil
            case (true, .some), (false, nil): break
            }
        }
        guard configuration.cellular.modemManager else {
            log.info("ModemManager disabled by [Cellular] ModemManager=no")
            return
        }
        startModemManagerSource(monitor: monitor, wait: 2)
    }

    private func startModemManagerSource(monitor: ReachabilityMonitor, wait: TimeInterval) {
        guard let systemBus else { return }
        let source = ModemManagerSource(monitor: monitor, bus: systemBus, log: log)
        if wait > 0 { _ = source.start(waitingUpTo: wait) } else { source.start() }
        modemSource = source
    }
}
