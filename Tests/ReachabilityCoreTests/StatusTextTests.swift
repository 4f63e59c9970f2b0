import Foundation
import Testing
@testable import ReachabilityCore

private func iface(_ name: String, _ kind: InterfaceKind) -> Interface {
    Interface(name: name, index: 2, kind: kind, up: true, carrier: true, operstate: "up", addresses: ["10.0.0.2/24"], metered: false)
}

private func status(_ s: NetworkStatus, primary: Interface?, vpn: Interface? = nil, connectivity: Connectivity,
                    expensive: Bool = false) -> Status {
    var st = Status.initial(since: Date(timeIntervalSince1970: 0))
    st.status = s; st.reachable = s.isReachable; st.primary = primary; st.vpn = vpn
    st.connectivity = connectivity; st.expensive = expensive
    return st
}

struct StatusTextCase: CustomTestStringConvertible, Sendable {
    let status: Status
    let text: String
    var testDescription: String { text }
}

let statusTextCases: [StatusTextCase] = [
    StatusTextCase(status: .initial(since: Date(timeIntervalSince1970: 0)), text: "not reachable"),
    StatusTextCase(status: status(.wifi, primary: iface("wlan0", .wifi), connectivity: .full), text: "wifi via wlan0, internet full"),
    StatusTextCase(status: status(.ethernet, primary: iface("eth0", .ethernet), connectivity: .unknown),
                   text: "ethernet via eth0, internet not checked"),
    StatusTextCase(status: status(.ethernet, primary: iface("eth0", .ethernet), connectivity: .portal),
                   text: "ethernet via eth0, internet captive portal"),
    StatusTextCase(status: status(.wwan4G, primary: iface("wwan0", .wwan), vpn: iface("tun0", .vpn), connectivity: .limited, expensive: true),
                   text: "wwan4G via wwan0, vpn tun0, internet limited"),
    StatusTextCase(status: status(.ethernet, primary: iface("eth1", .ethernet), connectivity: .full, expensive: true),
                   text: "ethernet via eth1, internet full, metered"),
    StatusTextCase(status: status(.unknown, primary: nil, connectivity: .none), text: "unknown, internet none"),
    // A name with control characters (the kernel allows any but `/`, `:` and white space).
    StatusTextCase(status: status(.ethernet, primary: iface("e\u{1B}x", .ethernet), vpn: iface("t\u{7}", .vpn), connectivity: .full),
                   text: #"ethernet via e\x1bx, vpn t\x07, internet full"#),
]

@Suite struct StatusTextTests {
    @Test(arguments: statusTextCases)
    func renders(_ c: StatusTextCase) {
        #expect(c.status.systemdStatusText == c.text)
    }
}
