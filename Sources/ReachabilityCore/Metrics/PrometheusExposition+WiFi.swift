extension PrometheusExposition {
    /// The connected Wi-Fi devices' figures, by interface, in node_exporter's wifi collector's
    /// names where promtool allows them (`node_wifi_station_signal_dbm`,
    /// `node_wifi_interface_frequency_hertz`; the rate in bytes a second, promtool's base unit,
    /// where node_exporter has bits), and the bars and strength people read. No SSID
    /// or BSSID label: the metrics are readable by more than root, and a network's name is
    /// anybody's text.
    static func writeWiFi(_ status: Status, into out: inout Writer) {
        let connected = status.interfaces.compactMap { interface in interface.wifi.map { (interface.name, $0) } }
            .sorted { $0.0 < $1.0 }
        guard !connected.isEmpty else { return }
        func family(_ name: String, _ help: String, _ value: (WiFi) -> Double?) {
            let values = connected.compactMap { name, wifi in value(wifi).map { (name, $0) } }
            guard !values.isEmpty else { return }
            out.family(name, .gauge, help)
            for (interface, number) in values { out.sample(name, ["interface": interface], number) }
        }
        family("reachd_wifi_station_signal_dbm", "The received signal of each connected Wi-Fi device, dBm; absent when its owner reports none.") {
            $0.signalDbm.map(Double.init)
        }
        family("reachd_wifi_station_bars", "Signal bars (0 to 4, Android's thresholds) of each connected Wi-Fi device.") {
            $0.bars.map(Double.init)
        }
        family("reachd_wifi_station_strength_ratio", "Signal strength of each connected Wi-Fi device on NetworkManager's scale, 0 to 1.") {
            $0.strengthPercent.map { Double($0) / 100 }
        }
        family("reachd_wifi_station_transmit_bitrate_bytes_per_second", "Transmit rate of each connected Wi-Fi device, bytes a second.") {
            $0.txBitrateKbps.map { Double($0) * 1000 / 8 }
        }
        family("reachd_wifi_interface_frequency_hertz", "Channel centre frequency of each connected Wi-Fi device.") {
            $0.frequencyMHz.map { Double($0) * 1_000_000 }
        }
    }
}
