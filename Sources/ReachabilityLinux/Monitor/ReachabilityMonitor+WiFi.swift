import ReachabilityCore

// The Wi-Fi owners' view of each Wi-Fi device (`WiFiOwnerSource`): the core decides what of it
// is an event (a roam, new bars, another network) and what rides along quietly.
extension ReachabilityMonitor {
    /// The Wi-Fi devices their owners report, arbitrated; re-classifies at once (reasons
    /// `roamed`, `wifiSignalChanged`, `wifiChanged`; signal figures alone make no event).
    /// On `queue` (the source runs on it).
    public func setWiFi(_ devices: [WiFiDevice]) {
        onQueue { perform(core.wifiChanged(devices, now: clock.now())) }
    }

    /// The Wi-Fi devices last handed to the monitor.
    public var wifiDevices: [WiFiDevice] { onQueue { core.wifi } }
}
