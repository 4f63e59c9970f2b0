import Foundation
import Testing
@testable import ReachabilityCore

private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

private func link(_ index: Int, _ name: String, _ kind: InterfaceKind = .ethernet, up: Bool = true, carrier: Bool = true, metered: Bool = false) -> LinkState {
    LinkState(index: index, name: name, kind: kind, up: up, carrier: carrier, operstate: carrier && up ? "up" : "down", metered: metered)
}
private func v4(_ index: Int, _ address: String, _ prefix: Int = 24) -> AddressState {
    AddressState(ifindex: index, family: .ipv4, address: address, prefixLength: prefix)
}
private func v6(_ index: Int, _ address: String, tentative: Bool = false) -> AddressState {
    AddressState(ifindex: index, family: .ipv6, address: address, prefixLength: 64, tentative: tentative)
}
private func defaultRoute(_ family: AddressFamily, _ index: Int, via gateway: String?, metric: UInt32 = 0) -> RouteState {
    RouteState(family: family, gateway: gateway, oif: index, metric: metric)
}
private let lo = link(1, "lo", .loopback)
private let loAddress = AddressState(ifindex: 1, family: .ipv4, address: "127.0.0.1", prefixLength: 8, scope: .host)

struct ClassifierCase: CustomTestStringConvertible, Sendable {
    let name: String
    let snapshot: NetworkSnapshot
    let status: NetworkStatus
    let primary: String?
    let vpn: String?
    let flags: [ReachabilityFlag]
    var ipv4 = true
    var ipv6 = false
    var expensive = false
    var testDescription: String { name }
}

private let ethernet = NetworkSnapshot(
    links: [1: lo, 2: link(2, "eth0")], addresses: [loAddress, v4(2, "192.168.1.20")],
    routes: [defaultRoute(.ipv4, 2, via: "192.168.1.1", metric: 100)])

let classifierCases: [ClassifierCase] = [
    ClassifierCase(name: "loopback only", snapshot: NetworkSnapshot(links: [1: lo], addresses: [loAddress]),
                   status: .notReachable, primary: nil, vpn: nil, flags: [], ipv4: false),
    ClassifierCase(name: "ethernet with default route", snapshot: ethernet,
                   status: .ethernet, primary: "eth0", vpn: nil, flags: [.reachable]),
    ClassifierCase(name: "wifi", snapshot: NetworkSnapshot(links: [2: link(2, "wlan0", .wifi)], addresses: [v4(2, "10.0.0.2")],
                                                          routes: [defaultRoute(.ipv4, 2, via: "10.0.0.1")]),
                   status: .wifi, primary: "wlan0", vpn: nil, flags: [.reachable]),
    ClassifierCase(name: "bridge counts as ethernet", snapshot: NetworkSnapshot(links: [3: link(3, "br0", .bridge)], addresses: [v4(3, "10.0.0.2")],
                                                          routes: [defaultRoute(.ipv4, 3, via: "10.0.0.1")]),
                   status: .ethernet, primary: "br0", vpn: nil, flags: [.reachable]),
    ClassifierCase(name: "virtual kind is unknown", snapshot: NetworkSnapshot(links: [3: link(3, "vx0", .virtual)], addresses: [v4(3, "10.0.0.2")],
                                                          routes: [defaultRoute(.ipv4, 3, via: "10.0.0.1")]),
                   status: .unknown, primary: "vx0", vpn: nil, flags: [.reachable]),
    ClassifierCase(name: "wwan without modem", snapshot: NetworkSnapshot(links: [4: link(4, "wwan0", .wwan)], addresses: [v4(4, "100.64.0.2")],
                                                          routes: [defaultRoute(.ipv4, 4, via: nil)]),
                   status: .wwan, primary: "wwan0", vpn: nil, flags: [.reachable, .isWWAN], expensive: true),
    ClassifierCase(name: "modem with LTE on a veth", snapshot: NetworkSnapshot(links: [4: link(4, "veth0")], addresses: [v4(4, "100.64.0.2")],
                                                          routes: [defaultRoute(.ipv4, 4, via: nil)],
                                                          modems: [ModemState(path: "/org/freedesktop/ModemManager1/Modem/0", interfaces: ["veth0"], accessTechnologies: ModemAccessTechnology.lte.rawValue)]),
                   status: .wwan4G, primary: "veth0", vpn: nil, flags: [.reachable, .isWWAN], expensive: true),
    ClassifierCase(name: "modem 5G NSA", snapshot: NetworkSnapshot(links: [4: link(4, "wwan0", .wwan)], addresses: [v4(4, "100.64.0.2")],
                                                          routes: [defaultRoute(.ipv4, 4, via: nil)],
                                                          modems: [ModemState(path: "/m/0", interfaces: ["wwan0"], accessTechnologies: ModemAccessTechnology([.lte, .fiveGNR]).rawValue)]),
                   status: .wwan5G, primary: "wwan0", vpn: nil, flags: [.reachable, .isWWAN], expensive: true),
    ClassifierCase(name: "modem EDGE", snapshot: NetworkSnapshot(links: [4: link(4, "wwan0", .wwan)], addresses: [v4(4, "100.64.0.2")],
                                                          routes: [defaultRoute(.ipv4, 4, via: nil)],
                                                          modems: [ModemState(path: "/m/0", interfaces: ["wwan0"], accessTechnologies: ModemAccessTechnology([.gsm, .edge]).rawValue)]),
                   status: .wwan2G, primary: "wwan0", vpn: nil, flags: [.reachable, .isWWAN], expensive: true),
    ClassifierCase(name: "modem UMTS", snapshot: NetworkSnapshot(links: [4: link(4, "wwan0", .wwan)], addresses: [v4(4, "100.64.0.2")],
                                                          routes: [defaultRoute(.ipv4, 4, via: nil)],
                                                          modems: [ModemState(path: "/m/0", interfaces: ["wwan0"], accessTechnologies: ModemAccessTechnology([.umts, .hsdpa]).rawValue)]),
                   status: .wwan3G, primary: "wwan0", vpn: nil, flags: [.reachable, .isWWAN], expensive: true),
    ClassifierCase(name: "VPN over ethernet keeps ethernet",
                   snapshot: NetworkSnapshot(links: [2: link(2, "eth0"), 5: link(5, "tun0", .vpn)],
                                             addresses: [v4(2, "192.168.1.20"), v4(5, "10.8.0.2")],
                                             routes: [defaultRoute(.ipv4, 2, via: "192.168.1.1", metric: 100), defaultRoute(.ipv4, 5, via: nil, metric: 50)]),
                   status: .ethernet, primary: "eth0", vpn: "tun0", flags: [.reachable, .transientConnection]),
    ClassifierCase(name: "OpenVPN def1 half routes",
                   snapshot: NetworkSnapshot(links: [2: link(2, "eth0"), 5: link(5, "tun0", .vpn)],
                                             addresses: [v4(2, "192.168.1.20"), v4(5, "10.8.0.2")],
                                             routes: [defaultRoute(.ipv4, 2, via: "192.168.1.1", metric: 100),
                                                      RouteState(family: .ipv4, destination: "0.0.0.0", prefixLength: 1, oif: 5),
                                                      RouteState(family: .ipv4, destination: "128.0.0.0", prefixLength: 1, oif: 5)]),
                   status: .ethernet, primary: "eth0", vpn: "tun0", flags: [.reachable, .transientConnection]),
    ClassifierCase(name: "two default routes: lower metric wins",
                   snapshot: NetworkSnapshot(links: [2: link(2, "eth0"), 3: link(3, "wlan0", .wifi)],
                                             addresses: [v4(2, "192.168.1.20"), v4(3, "10.0.0.2")],
                                             routes: [defaultRoute(.ipv4, 2, via: "192.168.1.1", metric: 600), defaultRoute(.ipv4, 3, via: "10.0.0.1", metric: 100)]),
                   status: .wifi, primary: "wlan0", vpn: nil, flags: [.reachable]),
    ClassifierCase(name: "IPv6 only", snapshot: NetworkSnapshot(links: [2: link(2, "eth0")], addresses: [v6(2, "2001:db8::2")],
                                                          routes: [defaultRoute(.ipv6, 2, via: "fe80::1", metric: 1024)]),
                   status: .ethernet, primary: "eth0", vpn: nil, flags: [.reachable], ipv4: false, ipv6: true),
    ClassifierCase(name: "tentative IPv6 is not usable", snapshot: NetworkSnapshot(links: [2: link(2, "eth0")], addresses: [v6(2, "2001:db8::2", tentative: true)],
                                                          routes: [defaultRoute(.ipv6, 2, via: "fe80::1", metric: 1024)]),
                   status: .notReachable, primary: nil, vpn: nil, flags: [.connectionRequired], ipv4: false),
    ClassifierCase(name: "link-local IPv6 only is not usable", snapshot: NetworkSnapshot(links: [2: link(2, "eth0")], addresses: [AddressState(ifindex: 2, family: .ipv6, address: "fe80::2", prefixLength: 64, scope: .link)],
                                                          routes: [defaultRoute(.ipv6, 2, via: "fe80::1", metric: 1024)]),
                   status: .notReachable, primary: nil, vpn: nil, flags: [.connectionRequired], ipv4: false),
    ClassifierCase(name: "carrier lost with the route still present",
                   snapshot: NetworkSnapshot(links: [2: link(2, "eth0", carrier: false)], addresses: [v4(2, "192.168.1.20")],
                                             routes: [defaultRoute(.ipv4, 2, via: "192.168.1.1")]),
                   status: .notReachable, primary: nil, vpn: nil, flags: [], ipv4: false),
    ClassifierCase(name: "link down", snapshot: NetworkSnapshot(links: [2: link(2, "eth0", up: false, carrier: false)], addresses: [v4(2, "192.168.1.20")],
                                                          routes: [defaultRoute(.ipv4, 2, via: "192.168.1.1")]),
                   status: .notReachable, primary: nil, vpn: nil, flags: [], ipv4: false),
    ClassifierCase(name: "carrier but no address: connectionRequired",
                   snapshot: NetworkSnapshot(links: [1: lo, 2: link(2, "eth0")], addresses: [loAddress]),
                   status: .notReachable, primary: nil, vpn: nil, flags: [.connectionRequired], ipv4: false),
    ClassifierCase(name: "metered ethernet is expensive",
                   snapshot: NetworkSnapshot(links: [2: link(2, "eth0", metered: true)], addresses: [v4(2, "192.168.1.20")],
                                             routes: [defaultRoute(.ipv4, 2, via: "192.168.1.1")]),
                   status: .ethernet, primary: "eth0", vpn: nil, flags: [.reachable], expensive: true),
    ClassifierCase(name: "blackhole default is not a path",
                   snapshot: NetworkSnapshot(links: [2: link(2, "eth0")], addresses: [v4(2, "192.168.1.20")],
                                             routes: [RouteState(family: .ipv4, oif: 2, type: .blackhole)]),
                   status: .notReachable, primary: nil, vpn: nil, flags: [.connectionRequired], ipv4: false),
    ClassifierCase(name: "local-table route is ignored",
                   snapshot: NetworkSnapshot(links: [2: link(2, "eth0")], addresses: [v4(2, "192.168.1.20")],
                                             routes: [RouteState(family: .ipv4, table: 255, gateway: "192.168.1.1", oif: 2)]),
                   status: .notReachable, primary: nil, vpn: nil, flags: [.connectionRequired], ipv4: false),
]

@Suite struct ClassifierTests {
    @Test(arguments: classifierCases)
    func classifies(_ c: ClassifierCase) {
        let status = Classifier.classify(c.snapshot, since: t0)
        #expect(status.status == c.status)
        #expect(status.reachable == c.status.isReachable)
        #expect(status.primary?.name == c.primary)
        #expect(status.vpn?.name == c.vpn)
        #expect(status.flags == c.flags)
        #expect(status.ipv4 == c.ipv4)
        #expect(status.ipv6 == c.ipv6)
        #expect(status.expensive == c.expensive)
        #expect(status.connectivity == (c.status.isReachable ? .unknown : .none))
    }

    @Test func everyStatusValueIsCovered() {
        let covered = Set(classifierCases.map(\.status))
        #expect(covered == Set(NetworkStatus.allCases))
    }

    @Test func gatewaysAreThePrimarys() {
        let status = Classifier.classify(ethernet, since: t0)
        #expect(status.gateways == ["192.168.1.1"])
        #expect(status.interfaces.map(\.name) == ["lo", "eth0"])
        #expect(status.primary?.addresses == ["192.168.1.20/24"])
    }

    @Test func cellularFacts() {
        let snapshot = NetworkSnapshot(links: [4: link(4, "wwan0", .wwan)], addresses: [v4(4, "100.64.0.2")],
                                       routes: [defaultRoute(.ipv4, 4, via: nil)],
                                       modems: [ModemState(path: "/org/freedesktop/ModemManager1/Modem/0", interfaces: ["wwan0"],
                                                           accessTechnologies: ModemAccessTechnology([.gprs, .edge]).rawValue, signalQuality: 71, roaming: false)])
        let status = Classifier.classify(snapshot, since: t0)
        #expect(status.cellular == Cellular(generation: "2G", accessTechnology: "edge", modem: "/org/freedesktop/ModemManager1/Modem/0",
                                            interface: "wwan0", signalQuality: 71, roaming: false))
    }

    @Test func probeDecidesConnectivity() {
        var snapshot = ethernet
        let probe = Probe(url: "http://127.0.0.1/", result: .portal, httpStatus: 302, portalUrl: "http://login/", checkedAt: t0)
        // A verdict counts for the path it was checked over only.
        snapshot.setVerdict(probe, path: ProbePath(Classifier.classify(snapshot, since: t0)))
        #expect(Classifier.classify(snapshot, since: t0).connectivity == .portal)
        #expect(Classifier.classify(snapshot, since: t0).probe == probe)
        snapshot.setVerdict(probe, path: ProbePath(interface: "eth9", index: 9, addresses: [], gateways: []))
        #expect(Classifier.classify(snapshot, since: t0).connectivity == .unknown)
        #expect(Classifier.classify(snapshot, since: t0).probe == nil)
    }
}
