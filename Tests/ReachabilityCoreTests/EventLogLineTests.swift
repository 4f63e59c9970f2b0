import Foundation
import Testing
@testable import ReachabilityCore

private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

private func link(_ name: String, _ index: Int, connectivity: Connectivity? = nil) -> Interface {
    var interface = Interface(name: name, index: index, kind: name.hasPrefix("w") ? .wifi : .ethernet, up: true, carrier: true,
                              operstate: "up", addresses: ["10.0.\(index).2/24"], metered: false)
    interface.connectivity = connectivity
    return interface
}

/// A reachable status over eth0 (wlan0 standing by) with `connectivity` and each family's verdict.
private func online(_ connectivity: Connectivity, ipv4: Connectivity? = nil, ipv6: Connectivity = .none,
                    standby: Connectivity? = nil, simulated: Bool = false) -> Status {
    let eth0 = link("eth0", 2), wlan0 = link("wlan0", 3, connectivity: standby)
    return Status(status: .ethernet, reachable: true, connectivity: connectivity, primary: eth0, vpn: nil, cellular: nil,
                  expensive: false, ipv4: true, ipv6: ipv6 != .none, gateways: ["10.0.2.1"], flags: [.reachable],
                  interfaces: [eth0, wlan0], probe: nil, since: t0, simulated: simulated,
                  ipv4Connectivity: ipv4 ?? connectivity, ipv6Connectivity: ipv6)
}

/// `status` with a data stall on `name` (the primary's copy too).
private func stalled(_ status: Status, on name: String) -> Status {
    let stall = DataStall(since: t0, method: .tcp, failRate: 0.958, sentSinceReceive: 48, periodMs: 10_000)
    var status = status
    for i in status.interfaces.indices where status.interfaces[i].name == name { status.interfaces[i].stall = stall }
    if status.primary?.name == name { status.primary?.stall = stall }
    return status
}

/// `online(.full)` with wlan0 (standing by) connected as `wifi` says.
private func withWiFi(_ wifi: WiFi) -> Status {
    var status = online(.full)
    status.interfaces[1].wifi = wifi
    return status
}

struct LogLineCase: CustomTestStringConvertible, Sendable {
    let reason: Reason
    let previous: Status
    let current: Status
    let line: String
    var testDescription: String { line }
}

/// reachd's log line for each event says what happened: a check's verdict and where, or the
/// status and the internet's verdict when that changed.
@Suite struct EventLogLineTests {
    static let cases: [LogLineCase] = [
        LogLineCase(reason: Reason(code: .probeResult, detail: "portal"), previous: online(.full), current: online(.portal),
                    line: "#7 probeResult: portal on eth0"),
        LogLineCase(reason: Reason(code: .probeResult), previous: online(.full, ipv6: .full),
                    current: online(.full, ipv6: .limited), line: "#7 probeResult: full on eth0 (IPv6: limited)"),
        LogLineCase(reason: Reason(code: .probeResult), previous: online(.full, ipv6: .unknown),
                    current: online(.full, ipv6: .unknown), line: "#7 probeResult: full on eth0"),
        LogLineCase(reason: Reason(code: .probeResult, interface: "wlan0", detail: "standby uplink"), previous: online(.full),
                    current: online(.full, standby: .limited), line: "#7 probeResult: limited on wlan0 (standby)"),
        LogLineCase(reason: Reason(code: .carrierLost, interface: "eth0"), previous: online(.full),
                    current: Status.initial(since: t0), line: "#7 carrierLost eth0: notReachable, internet none"),
        LogLineCase(reason: Reason(code: .addressAdded, interface: "eth0"), previous: online(.full),
                    current: { var s = online(.full); s.gateways = ["10.0.2.254"]; return s }(), line: "#7 addressAdded eth0: ethernet"),
        LogLineCase(reason: Reason(code: .simulation), previous: online(.full), current: online(.portal, simulated: true),
                    line: "#7 simulation: ethernet, internet portal (simulated)"),
        LogLineCase(reason: Reason(code: .dataStall, interface: "eth0"), previous: online(.full),
                    current: stalled(online(.full), on: "eth0"), line: "#7 dataStall eth0: stalled (tcp, 96 % retransmitted)"),
        LogLineCase(reason: Reason(code: .dataStall, interface: "eth0"), previous: stalled(online(.full), on: "eth0"),
                    current: stalled(online(.limited), on: "eth0"),
                    line: "#7 dataStall eth0: stalled (tcp, 96 % retransmitted), internet limited"),
        LogLineCase(reason: Reason(code: .dataStall, interface: "wlan0"), previous: stalled(online(.full, standby: .full), on: "wlan0"),
                    current: online(.full, standby: .full), line: "#7 dataStall wlan0: traffic answered"),
        LogLineCase(reason: Reason(code: .roamed, interface: "wlan0"), previous: online(.full),
                    current: withWiFi(WiFi(ssid: "cafe", bssid: "02:11:22:33:44:66", bars: 3, owner: .iwd)),
                    line: #"#7 roamed wlan0: "cafe", 3 bars"#),
        LogLineCase(reason: Reason(code: .wifiSignalChanged, interface: "wlan0"), previous: online(.full),
                    current: withWiFi(WiFi(ssid: "cafe", bars: 1, owner: .networkManager)), line: #"#7 wifiSignalChanged wlan0: "cafe", 1 bar"#),
        LogLineCase(reason: Reason(code: .wifiChanged, interface: "wlan0"), previous: withWiFi(WiFi(ssid: "cafe", owner: .iwd)),
                    current: online(.full), line: "#7 wifiChanged wlan0: no Wi-Fi connection"),
    ]

    @Test(arguments: cases)
    func line(_ c: LogLineCase) {
        let event = ReachabilityEvent(sequence: 7, timestamp: t0, event: .reachabilityChanged, reason: c.reason,
                                      previous: c.previous, current: c.current,
                                      changes: c.current.changes(from: c.previous))
        #expect(event.logLine == c.line)
    }
}
