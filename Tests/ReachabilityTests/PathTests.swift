import Foundation
import Testing
@testable import Reachability

/// Pure mapping tests: reachd's Status → Path, Probe → NetworkDetector.Result, HostCheck → state.
@Suite("Path and result mapping")
struct PathTests {
    static func interface(_ name: String, _ index: Int, _ kind: InterfaceKind, up: Bool = true, carrier: Bool = true,
                          addresses: [String] = ["10.0.0.2/24"]) -> Interface {
        Interface(name: name, index: index, kind: kind, up: up, carrier: carrier, operstate: up ? "up" : "down",
                  addresses: addresses, metered: false)
    }

    static func status(_ value: NetworkStatus, primary: Interface?, vpn: Interface? = nil, interfaces: [Interface],
                       flags: [ReachabilityFlag]? = nil, expensive: Bool = false) -> Status {
        Status(status: value, reachable: value.isReachable, connectivity: value.isReachable ? .full : .none,
               primary: primary, vpn: vpn, cellular: nil, expensive: expensive, ipv4: value.isReachable, ipv6: false,
               gateways: value.isReachable ? ["10.0.0.1"] : [], flags: flags ?? (value.isReachable ? [.reachable] : []),
               interfaces: interfaces, probe: nil, since: Date(timeIntervalSince1970: 0))
    }

    @Test("Wi-Fi primary with a VPN on top: satisfied, uses .wifi and .other, VPN listed first")
    func wifiWithVPN() {
        let wlan = Self.interface("wlan0", 3, .wifi)
        let tun = Self.interface("tun0", 9, .vpn, addresses: ["10.8.0.2/24"])
        let eth = Self.interface("eth0", 2, .ethernet, carrier: false, addresses: [])
        let path = Path(Self.status(.wifi, primary: wlan, vpn: tun, interfaces: [eth, wlan, tun]))
        #expect(path.status == .satisfied)
        #expect(path.usesInterfaceType(.wifi))
        #expect(path.usesInterfaceType(.other))
        #expect(!path.usesInterfaceType(.wiredEthernet))
        #expect(path.availableInterfaces.map(\.name) == ["tun0", "wlan0"])
        #expect(path.networkStatus == .wifi && path.connectivity == .full)
        #expect(path.supportsIPv4 && !path.supportsIPv6 && path.supportsDNS)
    }

    @Test("A data stall on the primary or the VPN stalls the path; a standby's does not, and its start is a new path")
    func dataStall() {
        let stall = DataStall(since: Date(timeIntervalSince1970: 5), method: .tcp, failRate: 0.96, sentSinceReceive: 48,
                              periodMs: 10_000)
        var wlan = Self.interface("wlan0", 3, .wifi), tun = Self.interface("tun0", 9, .vpn, addresses: ["10.8.0.2/24"])
        var wwan = Self.interface("wwan0", 4, .wwan, addresses: ["10.9.0.2/24"])
        let calm = Path(Self.status(.wifi, primary: wlan, vpn: tun, interfaces: [wlan, wwan, tun]))
        #expect(!calm.isStalled && calm.stall == nil)
        wwan.stall = stall
        #expect(!Path(Self.status(.wifi, primary: wlan, vpn: tun, interfaces: [wlan, wwan, tun])).isStalled)
        tun.stall = stall
        let overVPN = Path(Self.status(.wifi, primary: wlan, vpn: tun, interfaces: [wlan, wwan, tun]))
        #expect(overVPN.isStalled && overVPN.stall == stall)
        tun.stall = nil
        wlan.stall = stall
        let stalled = Path(Self.status(.wifi, primary: wlan, vpn: tun, interfaces: [wlan, wwan, tun]))
        #expect(stalled.isStalled && stalled.stall?.sentSinceReceive == 48)
        // Still `.full` until reachd's check says otherwise, and a path of its own (monitors hear it).
        #expect(stalled.connectivity == .full && stalled != calm)
        #expect(stalled.description.hasSuffix("internet: full stalled (tcp, 96 % retransmitted)"))
    }

    @Test("Low data mode: isConstrained is the status's constrained, and a change of it is a new path")
    func lowDataMode() {
        let eth = Self.interface("eth0", 2, .ethernet)
        var status = Self.status(.ethernet, primary: eth, interfaces: [eth], expensive: true)
        let plain = Path(status)
        #expect(!plain.isConstrained && plain.isExpensive)
        status.constrained = true
        let constrained = Path(status)
        #expect(constrained.isConstrained && constrained.isExpensive)
        #expect(constrained != plain)
    }

    @Test("Each family's verdict beside supportsIPv4/supportsIPv6: a dead IPv6 internet under a working IPv4 one")
    func familyVerdicts() {
        let eth = Self.interface("eth0", 2, .ethernet, addresses: ["10.0.0.2/24", "2001:db8::2/64"])
        var status = Self.status(.ethernet, primary: eth, interfaces: [eth])
        status.ipv6 = true
        status.ipv4Connectivity = .full
        status.ipv6Connectivity = .limited
        let path = Path(status)
        #expect(path.supportsIPv4 && path.supportsIPv6)
        #expect(path.ipv4Connectivity == .full && path.ipv6Connectivity == .limited)
        #expect(path.connectivity == .full)
        status.ipv6 = false
        status.ipv6Connectivity = .none
        let ipv4Only = Path(status)
        #expect(ipv4Only.supportsIPv4 && !ipv4Only.supportsIPv6 && ipv4Only.ipv6Connectivity == .none)
    }

    @Test("What the network announces: DNS, NAT64 and its captive-portal API, with what the API said")
    func announcements() {
        var wlan = Self.interface("wlan0", 3, .wifi)
        var status = Self.status(.wifi, primary: wlan, interfaces: [wlan])
        #expect(Path(status).captivePortal == nil && Path(status).dnsServers.isEmpty && Path(status).nat64Prefix == nil)
        wlan.dns = ["2001:db8::53"]; wlan.searchDomains = ["corp.example"]; wlan.nat64Prefix = "64:ff9b::/96"
        wlan.captivePortalApi = "https://10.0.0.1:8443/capport"
        status.primary = wlan; status.interfaces = [wlan]
        // Announced, the API not asked yet (or it failed: no source).
        let asked = Path(status).captivePortal
        #expect(asked?.apiURL == "https://10.0.0.1:8443/capport" && asked?.isCaptive == nil && asked?.portalURL == nil)
        #expect(Path(status).dnsServers == ["2001:db8::53"] && Path(status).searchDomains == ["corp.example"])
        #expect(Path(status).nat64Prefix == "64:ff9b::/96")
        let checked = Date(timeIntervalSince1970: 1_800_000_000)
        status.connectivity = .portal
        status.probe = Probe(url: "https://10.0.0.1:8443/capport", result: .portal, httpStatus: 200, portalUrl: "https://10.0.0.1/login",
                             checkedAt: checked, venueInfoUrl: "https://10.0.0.1/venue", secondsRemaining: 600, canExtendSession: true,
                             source: "ra")
        let portal = Path(status).captivePortal
        #expect(portal?.isCaptive == true && portal?.portalURL == "https://10.0.0.1/login" && portal?.venueInfoURL == "https://10.0.0.1/venue")
        #expect(portal?.secondsRemaining == 600 && portal?.canExtendSession == true && portal?.checkedAt == checked)
        status.connectivity = .full
        status.probe = Probe(url: "http://10.0.0.1/generate_204", result: .full, httpStatus: 204, checkedAt: checked,
                             secondsRemaining: 3000, source: "ra")
        let open = Path(status).captivePortal
        #expect(open?.isCaptive == false && open?.portalURL == nil && open?.secondsRemaining == 3000)
    }

    @Test("connectionRequired → .requiresConnection; nothing → .unsatisfied")
    func unsatisfied() {
        let eth = Self.interface("eth0", 2, .ethernet, addresses: [])
        #expect(Path(Self.status(.notReachable, primary: nil, interfaces: [eth], flags: [.connectionRequired])).status == .requiresConnection)
        let down = Path(Self.status(.notReachable, primary: nil, interfaces: [eth]))
        #expect(down.status == .unsatisfied)
        #expect(!down.usesInterfaceType(.wiredEthernet))
        #expect(down.gateways.isEmpty && !down.supportsIPv4)
    }

    @Test("requiredInterfaceType keeps only that type; none of it → unsatisfied")
    func requiredType() {
        let eth = Self.interface("eth0", 2, .ethernet)
        let wwan = Self.interface("wwan0", 4, .wwan)
        let status = Self.status(.ethernet, primary: eth, interfaces: [eth, wwan])
        let cellular = Path(status, requiredInterfaceType: .cellular)
        #expect(cellular.status == .satisfied)
        #expect(cellular.availableInterfaces.map(\.name) == ["wwan0"])
        let wifi = Path(status, requiredInterfaceType: .wifi)
        #expect(wifi.status == .unsatisfied)
        #expect(wifi.availableInterfaces.isEmpty)
    }

    @Test("interface kinds map to NWInterface types", arguments: [
        (InterfaceKind.ethernet, InterfaceType.wiredEthernet), (.bridge, .wiredEthernet), (.wifi, .wifi),
        (.wwan, .cellular), (.loopback, .loopback), (.vpn, .other), (.virtual, .other), (.other, .other),
    ])
    func interfaceTypes(kind: InterfaceKind, type: InterfaceType) {
        #expect(InterfaceType(kind) == type)
    }

    @Test("probe results become the iOS NetworkDetector's (isReachable, statusCode, error)")
    func results() {
        let at = Date(timeIntervalSince1970: 0)
        let full = NetworkDetector.Result(Probe(url: "http://t/", result: .full, httpStatus: 204, checkedAt: at))
        #expect(full.isReachable && full.statusCode == 204 && full.error == nil)
        let portal = NetworkDetector.Result(Probe(url: "http://t/", result: .portal, httpStatus: 302, portalUrl: "http://p/", checkedAt: at))
        #expect(!portal.isReachable && portal.statusCode == 302 && portal.error == .captivePortal(portalURL: "http://p/"))
        let limited = NetworkDetector.Result(Probe(url: "http://t/", result: .limited, error: "timed out", checkedAt: at))
        #expect(!limited.isReachable && limited.error == .probeFailed("timed out"))
        let none = NetworkDetector.Result(Probe(url: "http://t/", result: .none, checkedAt: at))
        #expect(none.error == .notReachable && none.connectivity == Connectivity.none)
        #expect(!portal.isFromCaptivePortalAPI && portal.secondsRemaining == nil)
        let announced = NetworkDetector.Result(Probe(url: "https://p/capport", result: .portal, httpStatus: 200, portalUrl: "https://p/login",
                                                     checkedAt: at, secondsRemaining: 60, source: "ra"))
        #expect(announced.isFromCaptivePortalAPI && announced.secondsRemaining == 60)
        #expect(announced.error == .captivePortal(portalURL: "https://p/login"))
    }

    @Test("a host check becomes the target's state")
    func hostStates() {
        let reachable = HostCheck(host: "h", addresses: ["10.0.0.9"], reachable: true, status: "wifi",
                                  flags: ["reachable", "isDirect"], routes: [], tcp: nil)
        #expect(Reachability.state(of: reachable) == Reachability.State(status: .wifi, flags: [.isDirect, .reachable]))
        let blackholed = HostCheck(host: "h", addresses: ["10.0.0.9"], reachable: false, status: "notReachable",
                                   flags: [], routes: [], tcp: nil)
        #expect(Reachability.state(of: blackholed) == .unreachable)
        let newer = HostCheck(host: "h", addresses: [], reachable: true, status: "satellite", flags: ["reachable", "someNewFlag"],
                              routes: [], tcp: nil)
        #expect(Reachability.state(of: newer) == Reachability.State(status: .unknown, flags: [.reachable]))
    }

    @Test("Connection descriptions are Reachability.swift's")
    func descriptions() {
        #expect(Reachability.Connection.unavailable.description == "No Connection")
        #expect(Reachability.Connection.wifi.description == "WiFi")
        #expect(Reachability.Connection.cellular.description == "Cellular")
        #expect(Reachability.Connection.ethernet.description == "Ethernet")
    }
}
