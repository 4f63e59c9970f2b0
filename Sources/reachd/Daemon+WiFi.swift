import ReachabilityCore
import ReachabilityLinux

extension Daemon {
    /// The Wi-Fi owners on the system bus (iwd, NetworkManager, wpa_supplicant), telling the
    /// monitor each Wi-Fi device's network, access point and signal. Nothing waits for their
    /// answers: a Wi-Fi device known a moment after the first status is an event like any other.
    /// An owner that does not run costs one name watch. The kernel's nl80211 completes them
    /// (NetworkManager's dBm) and speaks for a device no daemon manages.
    func startWiFi(monitor: ReachabilityMonitor) {
        guard let systemBus else { return }
        let reader = NL80211Reader()
        let source = WiFiOwnerSource(monitor: monitor, bus: systemBus, log: log, kernel: { reader.stations() })
        source.start()
        wifiSource = source
    }
}
