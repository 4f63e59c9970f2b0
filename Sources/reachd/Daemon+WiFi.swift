import ReachabilityCore
import ReachabilityLinux

extension Daemon {
    /// The Wi-Fi owners on the system bus (iwd, NetworkManager, wpa_supplicant), telling the
    /// monitor each Wi-Fi device's network, access point and signal. Nothing waits for their
    /// answers: a Wi-Fi device known a moment after the first status is an event like any other.
    /// An owner that does not run costs one name watch.
    func startWiFi(monitor: ReachabilityMonitor) {
        guard let systemBus else { return }
        let source = WiFiOwnerSource(monitor: monitor, bus: systemBus, log: log)
        source.start()
        wifiSource = source
    }
}
