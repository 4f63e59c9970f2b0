import Foundation
import Testing
@testable import ReachabilityCore

// MARK: - Host-name validation

struct HostNameCase: CustomTestStringConvertible, Sendable {
    let host: String
    let expected: HostSpec?   // nil: InvalidParameter(host)
    var testDescription: String { host.count > 40 ? "\(host.prefix(20))… (\(host.utf8.count) bytes)" : "\"\(host)\"" }
}

private let label63 = String(repeating: "a", count: 63)
private let name253 = [label63, label63, label63, String(repeating: "b", count: 61)].joined(separator: ".")

let hostNameCases: [HostNameCase] = [
    HostNameCase(host: "example.com", expected: .name("example.com")),
    HostNameCase(host: "example.com.", expected: .name("example.com")),
    HostNameCase(host: "localhost", expected: .name("localhost")),
    HostNameCase(host: "_sip._tcp.example.org", expected: .name("_sip._tcp.example.org")),
    HostNameCase(host: "xn--bcher-kva.example", expected: .name("xn--bcher-kva.example")),
    HostNameCase(host: "host-1.test", expected: .name("host-1.test")),
    HostNameCase(host: "192.0.2.1", expected: .address("192.0.2.1", .ipv4)),
    HostNameCase(host: "0.0.0.0", expected: .address("0.0.0.0", .ipv4)),
    HostNameCase(host: "2001:db8::1", expected: .address("2001:db8::1", .ipv6)),
    HostNameCase(host: "[2001:db8::1]", expected: .address("2001:db8::1", .ipv6)),
    HostNameCase(host: "::1", expected: .address("::1", .ipv6)),
    HostNameCase(host: "::", expected: .address("::", .ipv6)),
    HostNameCase(host: "::ffff:192.0.2.1", expected: .address("::ffff:192.0.2.1", .ipv6)),
    HostNameCase(host: "1:2:3:4:5:6:7:8", expected: .address("1:2:3:4:5:6:7:8", .ipv6)),
    HostNameCase(host: name253, expected: .name(name253)),
    // Bad input.
    HostNameCase(host: "", expected: nil),
    HostNameCase(host: "exa mple.com", expected: nil),
    HostNameCase(host: "example.com/path", expected: nil),
    HostNameCase(host: "ex;ample", expected: nil),
    HostNameCase(host: "bücher.example", expected: nil),
    HostNameCase(host: "a..b", expected: nil),
    HostNameCase(host: ".example.com", expected: nil),
    HostNameCase(host: ".", expected: nil),
    HostNameCase(host: "-host.example", expected: nil),
    HostNameCase(host: "host-.example", expected: nil),
    HostNameCase(host: name253 + "b", expected: nil),
    HostNameCase(host: String(repeating: "a", count: 64) + ".example", expected: nil),
    HostNameCase(host: "1.2.3", expected: nil),
    HostNameCase(host: "256.1.1.1", expected: nil),
    HostNameCase(host: "01.2.3.4", expected: nil),
    HostNameCase(host: "1:2:3:4:5:6:7:8:9", expected: nil),
    HostNameCase(host: "1::2::3", expected: nil),
    HostNameCase(host: "12345::1", expected: nil),
    HostNameCase(host: "fe80::1%eth0", expected: nil),
    HostNameCase(host: "[example.com]", expected: nil),
]

@Suite struct HostNameTests {
    @Test(arguments: hostNameCases)
    func parse(_ c: HostNameCase) {
        do {
            let spec = try HostName.parse(c.host)
            #expect(spec == c.expected)
        } catch {
            #expect(c.expected == nil, "unexpected rejection: \(error)")
            guard case let .invalidParameter(parameter, reason) = error else {
                Issue.record("expected invalidParameter, got \(error)"); return
            }
            #expect(parameter == "host")
            #expect(!reason.isEmpty)
        }
    }

    @Test func ipv6BytesMatchTheTextualForm() {
        #expect(HostName.ipv6Bytes("2001:db8::1") == [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [1])
        #expect(HostName.ipv6Bytes("::ffff:192.0.2.1") == Array(repeating: 0, count: 10) + [0xff, 0xff, 192, 0, 2, 1])
        #expect(HostName.ipv4Bytes("10.77.0.2") == [10, 77, 0, 2])
    }

    @Test func ports() throws {
        try HostName.validatePort(nil)
        try HostName.validatePort(1)
        try HostName.validatePort(65535)
        #expect(throws: HostCheckError.self) { try HostName.validatePort(0) }
        #expect(throws: HostCheckError.self) { try HostName.validatePort(65536) }
        #expect(throws: HostCheckError.self) { try HostName.validatePort(-1) }
    }

    @Test func reasonNamesTheProblem() {
        #expect(throws: HostCheckError.invalidParameter(parameter: "host", reason: "the host is empty")) { try HostName.parse("") }
        do { _ = try HostName.parse("a b") } catch { #expect(error.description.contains("\" \" at offset 1")) }
        do { _ = try HostName.parse(name253 + "b") } catch { #expect(error.description.contains("254 bytes")) }
    }
}

// MARK: - Evaluation

private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

private func iface(_ index: Int, _ name: String, _ kind: InterfaceKind, up: Bool = true, carrier: Bool = true,
                   addresses: [String] = ["10.0.0.2/24"]) -> Interface {
    Interface(name: name, index: index, kind: kind, up: up, carrier: carrier, operstate: up && carrier ? "up" : "down",
              addresses: addresses, metered: false)
}

private func status(_ interfaces: [Interface], primary: String? = nil, vpn: String? = nil, status: NetworkStatus = .ethernet,
                    cellular: Cellular? = nil) -> Status {
    Status(status: status, reachable: status.isReachable, connectivity: .unknown,
           primary: interfaces.first { $0.name == primary }, vpn: interfaces.first { $0.name == vpn },
           cellular: cellular, expensive: false, ipv4: true, ipv6: false, gateways: [], flags: [],
           interfaces: interfaces, probe: nil, since: t0)
}

private func unicast(_ address: String, oif: Int, gateway: String? = nil, source: String? = "10.0.0.2",
                     family: AddressFamily = .ipv4, link: RouteLookupResult.Link? = nil) -> RouteLookupResult {
    RouteLookupResult(address: address, family: family, type: .unicast, outputInterfaceIndex: oif, link: link,
                      gateway: gateway, preferredSource: source)
}

private func refused(_ address: String, _ type: RouteType, _ error: String) -> RouteLookupResult {
    RouteLookupResult(address: address, family: .ipv4, type: type, error: error)
}

private let lo = iface(1, "lo", .loopback, addresses: ["127.0.0.1/8", "::1/128"])
private let eth0 = iface(2, "eth0", .ethernet)
private let wlan0 = iface(3, "wlan0", .wifi, addresses: ["192.168.1.20/24"])
private let wwan0 = iface(4, "wwan0", .wwan, addresses: ["100.64.0.7/30"])
private let tun0 = iface(5, "tun0", .vpn, addresses: ["10.8.0.2/24"])
private let ethDown = iface(2, "eth0", .ethernet, carrier: false)
private let ethBare = iface(2, "eth0", .ethernet, addresses: [])
private let lte = Cellular(generation: "4G", accessTechnology: "lte", modem: "/org/freedesktop/ModemManager1/Modem/0",
                           interface: "wwan0", signalQuality: 70, roaming: false)

struct EvaluationCase: CustomTestStringConvertible, Sendable {
    let name: String
    let lookups: [RouteLookupResult]
    let status: Status
    let reachable: Bool
    let pathStatus: String
    let flags: [ReachabilityFlag]
    /// The first address of the answer (the one it describes).
    var first: String? = nil
    var interface: String?? = .none
    var testDescription: String { name }
}


let evaluationCases: [EvaluationCase] = [
    EvaluationCase(name: "via the default gateway on ethernet",
                   lookups: [unicast("192.0.2.1", oif: 2, gateway: "10.0.0.1")],
                   status: status([lo, eth0], primary: "eth0"),
                   reachable: true, pathStatus: "ethernet", flags: [.reachable], interface: "eth0"),
    EvaluationCase(name: "on-link destination is direct",
                   lookups: [unicast("10.0.0.9", oif: 2)],
                   status: status([lo, eth0], primary: "eth0"),
                   reachable: true, pathStatus: "ethernet", flags: [.reachable, .isDirect]),
    EvaluationCase(name: "a local address of eth0",
                   lookups: [RouteLookupResult(address: "10.0.0.2", family: .ipv4, type: .local, outputInterfaceIndex: 1,
                                               link: .init(name: "lo", up: true, carrier: true), preferredSource: "10.0.0.2")],
                   status: status([lo, eth0], primary: "eth0"),
                   reachable: true, pathStatus: "ethernet", flags: [.reachable, .isDirect, .isLocalAddress], interface: "lo"),
    EvaluationCase(name: "loopback address",
                   lookups: [RouteLookupResult(address: "127.0.0.1", family: .ipv4, type: .local, outputInterfaceIndex: 1, preferredSource: "127.0.0.1")],
                   status: status([lo], status: .notReachable),
                   reachable: true, pathStatus: "unknown", flags: [.reachable, .isDirect, .isLocalAddress]),
    EvaluationCase(name: "wifi",
                   lookups: [unicast("192.0.2.1", oif: 3, gateway: "192.168.1.1", source: "192.168.1.20")],
                   status: status([lo, wlan0], primary: "wlan0", status: .wifi),
                   reachable: true, pathStatus: "wifi", flags: [.reachable]),
    EvaluationCase(name: "cellular with a known generation",
                   lookups: [unicast("192.0.2.1", oif: 4, gateway: "100.64.0.5")],
                   status: status([lo, wwan0], primary: "wwan0", status: .wwan4G, cellular: lte),
                   reachable: true, pathStatus: "wwan4G", flags: [.reachable, .isWWAN]),
    EvaluationCase(name: "cellular that is not the primary: generation unknown",
                   lookups: [unicast("198.18.0.1", oif: 4, gateway: "100.64.0.5")],
                   status: status([lo, eth0, wwan0], primary: "eth0"),
                   reachable: true, pathStatus: "wwan", flags: [.reachable, .isWWAN]),
    EvaluationCase(name: "through the VPN names the transport beneath",
                   lookups: [unicast("10.8.1.1", oif: 5, gateway: "10.8.0.1")],
                   status: status([lo, wlan0, tun0], primary: "wlan0", vpn: "tun0", status: .wifi),
                   reachable: true, pathStatus: "wifi", flags: [.reachable, .transientConnection]),
    EvaluationCase(name: "a more specific route over a second interface",
                   lookups: [unicast("192.168.1.50", oif: 3, source: "192.168.1.20")],
                   status: status([lo, eth0, wlan0], primary: "eth0"),
                   reachable: true, pathStatus: "wifi", flags: [.reachable, .isDirect], interface: "wlan0"),
    EvaluationCase(name: "output interface without carrier",
                   lookups: [unicast("192.0.2.1", oif: 2, gateway: "10.0.0.1")],
                   status: status([lo, ethDown], status: .notReachable),
                   reachable: false, pathStatus: "notReachable", flags: []),
    EvaluationCase(name: "carrier but no address: connection required",
                   lookups: [unicast("192.0.2.1", oif: 2, gateway: "10.0.0.1", source: nil)],
                   status: status([lo, ethBare], status: .notReachable),
                   reachable: false, pathStatus: "notReachable", flags: [.connectionRequired]),
    EvaluationCase(name: "interface the monitor does not list: the kernel's link state decides",
                   lookups: [unicast("192.0.2.1", oif: 9, gateway: "10.0.0.1", link: .init(name: "ignored0", up: true, carrier: true))],
                   status: status([lo, eth0], primary: "eth0"),
                   reachable: true, pathStatus: "unknown", flags: [.reachable], interface: "ignored0"),
    EvaluationCase(name: "unlisted interface that is down",
                   lookups: [unicast("192.0.2.1", oif: 9, gateway: "10.0.0.1", link: .init(name: "ignored0", up: true, carrier: false))],
                   status: status([lo, eth0], primary: "eth0"),
                   reachable: false, pathStatus: "notReachable", flags: []),
    EvaluationCase(name: "blackhole route",
                   lookups: [refused("198.51.100.7", .blackhole, "Invalid argument")],
                   status: status([lo, eth0], primary: "eth0"),
                   reachable: false, pathStatus: "notReachable", flags: [], interface: .some(nil)),
    EvaluationCase(name: "unreachable route",
                   lookups: [refused("198.51.100.7", .unreachable, "No route to host")],
                   status: status([lo, eth0], primary: "eth0"),
                   reachable: false, pathStatus: "notReachable", flags: []),
    EvaluationCase(name: "prohibit route",
                   lookups: [refused("198.51.100.7", .prohibit, "Permission denied")],
                   status: status([lo, eth0], primary: "eth0"),
                   reachable: false, pathStatus: "notReachable", flags: []),
    EvaluationCase(name: "throw route",
                   lookups: [refused("198.51.100.7", .throwRoute, "Network is unreachable")],
                   status: status([lo, eth0], primary: "eth0"),
                   reachable: false, pathStatus: "notReachable", flags: []),
    EvaluationCase(name: "IPv6 blackhole reported as a route of that type (kernel points it at lo)",
                   lookups: [RouteLookupResult(address: "2001:db8::1", family: .ipv6, type: .blackhole, outputInterfaceIndex: 1, gateway: nil)],
                   status: status([lo, eth0], primary: "eth0"),
                   reachable: false, pathStatus: "notReachable", flags: [], interface: .some(nil)),
    EvaluationCase(name: "first address unreachable, second reachable: the answer describes the second",
                   lookups: [RouteLookupResult(address: "2001:db8::1", family: .ipv6, type: .unreachable, error: "Network is unreachable"),
                             unicast("192.0.2.1", oif: 2, gateway: "10.0.0.1")],
                   status: status([lo, eth0], primary: "eth0"),
                   reachable: true, pathStatus: "ethernet", flags: [.reachable], first: "192.0.2.1"),
]

@Suite struct HostEvaluatorTests {
    @Test(arguments: evaluationCases)
    func evaluate(_ c: EvaluationCase) throws {
        let answer = HostEvaluator.evaluate(host: "h.test", lookups: c.lookups, status: c.status)
        #expect(answer.reachable == c.reachable)
        #expect(answer.status == c.pathStatus)
        #expect(answer.reachabilityFlags == c.flags)
        #expect(answer.addresses.count == c.lookups.count)
        #expect(answer.routes.map(\.address) == answer.addresses)
        #expect(answer.addresses.first == (c.first ?? c.lookups.first?.address))
        if case let .some(name) = c.interface { #expect(answer.routes.first?.interface == name) }
        #expect(answer.tcp == nil)   // the daemon never connects
        #expect(answer.flags.contains("reachable") == answer.reachable)
    }

    /// The client's TCP connect on top of the daemon's answer: a refused connect means the host
    /// answered (reachable, port closed); silence makes it not reachable; the address that
    /// answered comes first.
    @Test func clientTCPOnTopOfTheAnswer() {
        let two = HostEvaluator.evaluate(host: "h.test", lookups: [unicast("10.0.0.1", oif: 2), unicast("10.0.0.3", oif: 2),
                                                                   refused("198.51.100.7", .blackhole, "Invalid argument")],
                                         status: status([lo, eth0], primary: "eth0"))
        #expect(two.tcpCandidates == ["10.0.0.1", "10.0.0.3"])

        let connected = two.withTCP(TCPCheck(port: 443, connected: true, rttMs: 0.4), address: "10.0.0.1")
        #expect(connected.reachable && connected.reachabilityFlags == [.reachable, .isDirect] && connected.addresses.first == "10.0.0.1")

        let closed = two.withTCP(TCPCheck(port: 443, connected: false, error: TCPCheck.refusedError), address: "10.0.0.3")
        #expect(closed.reachable && closed.status == "ethernet" && closed.reachabilityFlags == [.reachable, .isDirect])
        #expect(closed.addresses == ["10.0.0.3", "10.0.0.1", "198.51.100.7"] && closed.routes.map(\.address) == closed.addresses)
        #expect(closed.tcp?.portClosed == true)

        let silent = two.withTCP(TCPCheck(port: 443, connected: false, error: "timed out after 5 s"), address: "10.0.0.3")
        #expect(!silent.reachable && silent.status == "ethernet" && silent.reachabilityFlags == [.isDirect])
        #expect(silent.addresses.first == "10.0.0.1")

        let hole = HostEvaluator.evaluate(host: "h.test", lookups: [refused("198.51.100.7", .blackhole, "Invalid argument")],
                                          status: status([lo, eth0], primary: "eth0"))
        #expect(hole.tcpCandidates == [])
        let notTried = hole.withTCP(TCPCheck(port: 22, connected: false, error: "not attempted: no usable route"), address: nil)
        #expect(!notTried.reachable && notTried.tcp?.error == "not attempted: no usable route")
    }

    @Test func routeFieldsComeFromTheLookupAndTheStatus() {
        let answer = HostEvaluator.evaluate(host: "h.test", lookups: [unicast("192.0.2.1", oif: 3, gateway: "192.168.1.1", source: "192.168.1.20")],
                                            status: status([lo, wlan0], primary: "wlan0", status: .wifi))
        #expect(answer.routes == [Route(address: "192.0.2.1", interface: "wlan0", kind: "wifi", gateway: "192.168.1.1",
                                        source: "192.168.1.20", type: "unicast")])
    }

    @Test func noAddressesIsNotReachable() {
        let answer = HostEvaluator.evaluate(host: "h.test", lookups: [], status: status([lo, eth0], primary: "eth0"))
        #expect(!answer.reachable)
        #expect(answer.status == "notReachable")
        #expect(answer.routes.isEmpty)
    }
}

// MARK: - Wire form

@Suite struct HostCheckWireTests {
    @Test func everyFieldIsPresentNullForAbsentOptionals() throws {
        let answer = HostCheck(host: "h.test", addresses: ["198.51.100.7"], reachable: false, status: "notReachable", flags: [],
                               routes: [Route(address: "198.51.100.7", interface: nil, kind: nil, gateway: nil, source: nil, type: "blackhole")],
                               tcp: nil)
        let json = try WireJSON.string(answer)
        #expect(json == #"{"addresses":["198.51.100.7"],"flags":[],"host":"h.test","reachable":false,"routes":[{"address":"198.51.100.7","gateway":null,"interface":null,"kind":null,"source":null,"type":"blackhole"}],"status":"notReachable","tcp":null}"#)
        let tcp = try WireJSON.string(TCPCheck(port: 80, connected: false, error: "Connection refused"))
        #expect(tcp == #"{"connected":false,"error":"Connection refused","port":80,"rttMs":null}"#)
    }

    @Test func roundTrip() throws {
        let answer = HostCheck(host: "h.test", addresses: ["10.0.0.1", "2001:db8::1"], reachable: true, status: "ethernet",
                               flags: ["reachable", "isDirect", "someFutureFlag"],
                               routes: [Route(address: "10.0.0.1", interface: "eth0", kind: "ethernet", gateway: nil, source: "10.0.0.2", type: "unicast")],
                               tcp: TCPCheck(port: 22, connected: true, rttMs: 0.25))
        let decoded = try WireJSON.decoder().decode(HostCheck.self, from: WireJSON.encoder().encode(answer))
        #expect(decoded == answer)
        #expect(decoded.reachabilityFlags == [.reachable, .isDirect])
    }
}

// MARK: - Human form

struct SummaryCase: CustomTestStringConvertible, Sendable {
    let check: HostCheck
    let line: String
    var testDescription: String { line }
}

private func route(_ address: String, _ interface: String?, gateway: String? = nil, source: String? = nil, type: String = "unicast") -> Route {
    Route(address: address, interface: interface, kind: interface == nil ? nil : "ethernet", gateway: gateway, source: source, type: type)
}

let summaryCases: [SummaryCase] = [
    SummaryCase(check: HostCheck(host: "example.com", addresses: ["93.184.216.34"], reachable: true, status: "ethernet", flags: ["reachable"],
                                 routes: [route("93.184.216.34", "eth0", gateway: "10.0.0.1", source: "10.0.0.2")],
                                 tcp: TCPCheck(port: 443, connected: true, rttMs: 12.34)),
                line: "example.com (93.184.216.34): reachable via eth0 gateway 10.0.0.1 src 10.0.0.2 [reachable] · tcp/443 connected in 12.3 ms"),
    SummaryCase(check: HostCheck(host: "gw.test", addresses: ["10.0.0.1", "2001:db8::1"], reachable: true, status: "ethernet", flags: ["reachable", "isDirect"],
                                 routes: [route("10.0.0.1", "eth0", source: "10.0.0.2"), route("2001:db8::1", "eth0", source: "2001:db8::2")], tcp: nil),
                line: "gw.test (10.0.0.1, +1 more): reachable via eth0 src 10.0.0.2 [reachable, isDirect]"),
    SummaryCase(check: HostCheck(host: "10.0.0.2", addresses: ["10.0.0.2"], reachable: true, status: "ethernet", flags: ["reachable", "isDirect", "isLocalAddress"],
                                 routes: [route("10.0.0.2", "lo", source: "10.0.0.2", type: "local")], tcp: nil),
                line: "10.0.0.2: reachable (local address) via lo src 10.0.0.2 [reachable, isDirect, isLocalAddress]"),
    SummaryCase(check: HostCheck(host: "hole.test", addresses: ["198.51.100.7"], reachable: false, status: "notReachable", flags: [],
                                 routes: [route("198.51.100.7", nil, type: "blackhole")], tcp: nil),
                line: "hole.test (198.51.100.7): not reachable: blackhole route"),
    SummaryCase(check: HostCheck(host: "192.0.2.1", addresses: ["192.0.2.1"], reachable: false, status: "notReachable", flags: [],
                                 routes: [route("192.0.2.1", nil, type: "unreachable")], tcp: TCPCheck(port: 22, connected: false, error: "not attempted: no usable route")),
                line: "192.0.2.1: not reachable: no route · tcp/22 failed: not attempted: no usable route"),
    SummaryCase(check: HostCheck(host: "[2001:db8::1]", addresses: ["2001:db8::1"], reachable: true, status: "ethernet", flags: ["reachable", "isDirect"],
                                 routes: [route("2001:db8::1", "eth0", source: "2001:db8::2")], tcp: TCPCheck(port: 80, connected: false, error: "Connection refused")),
                line: "[2001:db8::1]: reachable via eth0 src 2001:db8::2 [reachable, isDirect] · tcp/80 closed (connection refused)"),
]

@Suite struct HostCheckSummaryTests {
    @Test(arguments: summaryCases)
    func summary(_ c: SummaryCase) { #expect(c.check.summary == c.line) }

    @Test func comparableIgnoresOnlyTheRoundTrip() {
        let a = summaryCases[0].check
        var b = a
        b.tcp?.rttMs = 99
        #expect(a.comparable == b.comparable)
        b.routes[0].gateway = "10.0.0.254"
        #expect(a.comparable != b.comparable)
    }
}
