import Foundation
import ReachabilityCore
import Synchronization
import Testing
import TestSupport
@testable import ReachabilityLinux

/// The path reachd decides, held against the kernel's own answer (RTM_GETROUTE) for the same
/// packet: an app's TCP connection to port 443 of a public address, from user 1000, unmarked.
/// Only loopback and namespaces made here see any of it; nothing is sent.
enum KernelDifferential {
    /// What either side says about one destination, in terms both can say.
    enum Answer: Equatable, CustomStringConvertible {
        case via(oifs: [Int], gateways: [String?])
        case refused(RouteType)

        var description: String {
            switch self {
            case .via(let oifs, let gateways): return "via \(zip(oifs, gateways).map { "\($0.0)/\($0.1 ?? "-")" }.joined(separator: ","))"
            case .refused(let type): return "refused (\(type.rawValue))"
            }
        }
    }

    /// reachd's answer, from a fresh dump of the namespace decoded as the monitor decodes it.
    static func ours(_ table: KernelStateTable, family: AddressFamily, destination: String, mark: UInt32 = 0) -> Answer {
        var kinds: [Int: InterfaceKind] = [:]
        for (index, link) in table.links { kinds[index] = link.loopback ? .loopback : link.rtnlKind == "tun" ? .vpn : .ethernet }
        guard let decision = Classifier.decide(table.snapshot(kinds: kinds), family: family, destination: destination, mark: mark)
        else { return .refused(.other) }
        switch decision.outcome {
        case .route(let hops): return .via(oifs: hops.map(\.oif), gateways: hops.map(\.gateway))
        case .blocked(let type): return .refused(type)
        // The kernel answers ENETUNREACH, which reads as an unreachable route.
        case .none: return .refused(.unreachable)
        }
    }

    /// The kernel's answer.
    static func kernels(_ lookup: RouteLookup, destination: String, mark: UInt32 = 0) throws -> Answer {
        let result = try lookup.lookup(destination, tcpPort: 443, uid: RouteQuery.referenceUID, mark: mark == 0 ? nil : mark)
        guard result.type == .unicast, let oif = result.outputInterfaceIndex else { return .refused(result.type) }
        return .via(oifs: [oif], gateways: [result.gateway])
    }

    /// Agree when both refuse alike, or the kernel's interface is one of reachd's next hops
    /// (a multipath route's hop is the kernel's pick by a hash of the flow) with its gateway.
    static func agree(_ ours: Answer, _ kernels: Answer) -> Bool {
        switch (ours, kernels) {
        case (.refused(let a), .refused(let b)): return a == b
        case (.via(let oifs, let gateways), .via(let kernelOifs, let kernelGateways)):
            guard let oif = kernelOifs.first else { return false }
            let gateway = kernelGateways.first ?? nil
            return zip(oifs, gateways).contains { $0.0 == oif && $0.1 == gateway }
        case (.via, .refused), (.refused, .via): return false
        }
    }

    /// Every candidate destination of both families (and `marks`) compared; the disagreements.
    static func disagreements(in namespace: TestNamespace, marks: [UInt32] = [0]) throws -> [String] {
        let table = try KernelStateDump.read(networkNamespace: namespace.name)
        let lookup = try RouteLookup(networkNamespace: namespace.name)
        var found: [String] = []
        for family in AddressFamily.allCases {
            for destination in InternetPath.candidates(for: family) {
                for mark in marks {
                    let ours = ours(table, family: family, destination: destination, mark: mark)
                    let kernels = try kernels(lookup, destination: destination, mark: mark)
                    if !agree(ours, kernels) {
                        found.append("\(destination) mark \(mark): reachd \(ours), kernel \(kernels)")
                    }
                }
            }
        }
        return found
    }
}

/// Random rule and route sets, as `ip -batch` commands.
enum RandomRouting {
    static let tables = ["main", "100", "101", "102"]

    static func commands(seed: UInt64, links: Int) -> [String] {
        var random = SplitMix64(seed: seed)
        var commands: [String] = []
        for family in AddressFamily.allCases {
            let v6 = family == .ipv6
            let f = v6 ? "-6 " : ""
            // Routes: at most one per (table, prefix, metric), as `ip route add` allows.
            var taken: Set<String> = []
            let prefixes = v6 ? ["default", "::/1", "8000::/1", "2606::/16", "2001:4860::/32", "2606:4700:4700::1111/128", "fd99::/16"]
                              : ["default", "0.0.0.0/1", "128.0.0.0/1", "1.0.0.0/8", "8.0.0.0/7", "1.1.1.1/32", "50.0.0.0/8"]
            for _ in 0..<Int.random(in: 0...8, using: &random) {
                let table = tables.randomElement(using: &random)!
                let prefix = prefixes.randomElement(using: &random)!
                let metric = [0, 10, 100, 200].randomElement(using: &random)!
                guard taken.insert("\(table) \(prefix) \(metric)").inserted else { continue }
                let link = Int.random(in: 0..<links, using: &random)
                let gateway = v6 ? "fd00:\(link + 1)::1" : "10.\(link + 1).0.1"
                let kind = Int.random(in: 0..<10, using: &random)
                let head: String
                switch kind {
                case 0: head = "unreachable \(prefix)"
                case 1: head = "blackhole \(prefix)"
                case 2: head = "prohibit \(prefix)"
                case 3: head = "throw \(prefix)"
                default: head = "\(prefix) via \(gateway) dev eth\(link)"
                }
                commands.append("\(f)route add \(head) table \(table) metric \(metric)")
            }
            // Rules: distinct priorities below main's.
            var priorities: [Int] = []
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                let priority = Int.random(in: 1...32000, using: &random)
                if !priorities.contains(priority) { priorities.append(priority) }
            }
            for priority in priorities {
                var words = ["\(f)rule add"]
                if Int.random(in: 0..<5, using: &random) == 0 { words.append("not") }
                for _ in 0..<Int.random(in: 0...2, using: &random) {
                    switch Int.random(in: 0..<13, using: &random) {
                    case 0: words.append("fwmark \(["0xca6c", "0x1/0x1", "0x0/0xff", "0x100"].randomElement(using: &random)!)")
                    case 1: words.append("iif \(["lo", "eth0"].randomElement(using: &random)!)")
                    case 2: words.append("oif eth\(Int.random(in: 0..<links, using: &random))")
                    case 3: words.append("from \((v6 ? ["::/1", "fd00::/8"] : ["0.0.0.0/1", "10.0.0.0/8"]).randomElement(using: &random)!)")
                    case 4: words.append("to \((v6 ? ["2606::/16", "::/1", "2001::/16"] : ["1.0.0.0/8", "0.0.0.0/1", "128.0.0.0/1", "8.0.0.0/7"]).randomElement(using: &random)!)")
                    case 5: words.append("tos 0x10")
                    case 6: words.append("ipproto \(["tcp", "udp"].randomElement(using: &random)!)")
                    case 7: words.append("dport \(["443", "80", "400-500"].randomElement(using: &random)!)")
                    case 8: words.append("sport 1000-2000")
                    case 9: words.append("uidrange \(["1000-1000", "0-999", "500-5000"].randomElement(using: &random)!)")
                    case 10: words.append("suppress_prefixlength \([0, 1, 8].randomElement(using: &random)!)")
                    case 11: words.append("suppress_ifgroup 5")
                    default: break
                    }
                }
                words.append("pref \(priority)")
                switch Int.random(in: 0..<10, using: &random) {
                case 0: words.append("unreachable")
                case 1: words.append("blackhole")
                case 2: words.append("prohibit")
                case 3: words.append("nop")
                case 4:
                    let later = priorities.filter { $0 > priority }
                    words.append("goto \(later.randomElement(using: &random) ?? 32766)")
                default: words.append("lookup \(tables.randomElement(using: &random)!)")
                }
                commands.append(words.joined(separator: " "))
            }
        }
        return commands
    }

    /// A default route of each family over eth0 (the internet), and routes or rules that send
    /// the public resolvers' prefixes somewhere else (another link, a table of their own, a
    /// refusing route): what a VPN for DNS alone, or a router hijacking DNS, sets up.
    static func resolversElsewhere(seed: UInt64, links: Int) -> [String] {
        var random = SplitMix64(seed: seed)
        var commands = ["route add default via 10.1.0.1 dev eth0 metric 100",
                        "-6 route add default via fd00:1::1 dev eth0 metric 100"]
        for family in AddressFamily.allCases {
            let v6 = family == .ipv6
            let f = v6 ? "-6 " : ""
            let prefixes = v6 ? ["2606:4700:4700::1111/128", "2001:4860:4860::8888/128", "2620:fe::fe/128", "2620:119:35::35/128",
                                 "2606:4700::/32", "2001:4860::/32", "2620::/16"]
                              : ["1.1.1.1/32", "8.8.8.8/32", "9.9.9.9/32", "208.67.222.222/32", "1.0.0.0/8", "8.0.0.0/7",
                                 "208.0.0.0/8"]
            var priority = 100
            for prefix in prefixes where Int.random(in: 0..<4, using: &random) != 0 {
                let link = Int.random(in: 1..<links, using: &random)
                let gateway = v6 ? "fd00:\(link + 1)::1" : "10.\(link + 1).0.1"
                switch Int.random(in: 0..<4, using: &random) {
                case 0: commands.append("\(f)route add \(prefix) via \(gateway) dev eth\(link)")
                case 1: commands.append("\(f)route add unreachable \(prefix)")
                default:
                    commands.append("\(f)rule add pref \(priority) to \(prefix) lookup 100")
                    priority += 1
                    if Int.random(in: 0..<2, using: &random) == 0 {
                        commands.append("\(f)route replace default via \(gateway) dev eth\(link) table 100")
                    } else {
                        commands.append("\(f)route replace blackhole default table 100")
                    }
                }
            }
        }
        return commands
    }

    /// Back to a namespace with only its links' own routes and the kernel's default rules.
    static let reset = [
        "rule flush", "rule add pref 32766 lookup main", "rule add pref 32767 lookup default",
        "-6 rule flush", "-6 rule add pref 32766 lookup main",
        "route flush table main proto boot", "-6 route flush table main proto boot",
    ] + ["100", "101", "102"].flatMap { ["route flush table \($0)", "-6 route flush table \($0)"] }
}

extension SystemTests {
@Suite struct PolicyRoutingKernelTests {
    /// A host namespace with `links` veth uplinks eth0… to a network namespace, each with
    /// 10.N.0.2/24 and fd00:N::2/64 (gateways .1 / ::1 answer on the other side); eth1 is in group 5.
    static func host(links: Int) throws -> (host: TestNamespace, network: TestNamespace) {
        let host = try TestNamespace(tag: "p"), network = try TestNamespace(tag: "q")
        for i in 0..<links {
            try host.ip("link add eth\(i) type veth peer name up\(i) netns \(network.name)")
            try network.ip("addr add 10.\(i + 1).0.1/24 dev up\(i)")
            try network.ip("-6 addr add fd00:\(i + 1)::1/64 dev up\(i) nodad")
            try network.ip("link set up\(i) up")
            try host.ip("addr add 10.\(i + 1).0.2/24 dev eth\(i)")
            try host.ip("-6 addr add fd00:\(i + 1)::2/64 dev eth\(i) nodad")
            try host.ip("link set eth\(i) up")
        }
        if links > 1 { try host.ip("link set eth1 group 5") }
        return (host, network)
    }

    /// Runs `commands` (`ip` arguments; those of IPv6 start with `-6 `) as two batches, one per
    /// family (a batch line cannot choose its family).
    static func batch(_ namespace: TestNamespace, _ commands: [String]) throws {
        for (option, lines) in [("-4", commands.filter { !$0.hasPrefix("-6 ") }),
                                ("-6", commands.filter { $0.hasPrefix("-6 ") }.map { String($0.dropFirst(3)) })] where !lines.isEmpty {
            let file = NSTemporaryDirectory() + "\(TestResources.prefix)batch-\(UUID().uuidString)"
            try lines.joined(separator: "\n").appending("\n").write(toFile: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: file) }
            // -force: a command the kernel refuses is passed over; whatever state results is what
            // is compared.
            try sh("ip -n \(namespace.name) \(option) -force -batch \(file) >/dev/null 2>&1", check: false)
        }
    }

    /// Hundreds of random rule and route sets: reachd's decision equals the kernel's for every
    /// candidate address of both families. The monitor that watched it all ends with the same
    /// rules and routes as a fresh dump.
    @Test(.needsRoot()) func randomRuleSetsAgreeWithTheKernel() throws {
        let (host, network) = try Self.host(links: 3)
        defer { host.destroy(); network.destroy() }
        let sysfs = try FakeSysfs()
        let monitor = ReachabilityMonitor(configuration: monitorConfiguration(host, sysfs: sysfs))
        try monitor.start()
        defer { monitor.stop() }

        let base: UInt64 = 0x5EED_0000
        let cases = 300
        var failures: [String] = []
        var refused = 0, routed = 0
        for n in 0..<UInt64(cases) {
            let seed = base + n
            try Self.batch(host, RandomRouting.reset)
            try Self.batch(host, RandomRouting.commands(seed: seed, links: 3))
            let found = try KernelDifferential.disagreements(in: host, marks: [0, 0xca6c])
            if !found.isEmpty {
                let rules = try host.ip("rule show") + (try host.ip("-6 rule show"))
                let routes = try host.ip("route show table all type unicast") + (try host.ip("route show table all")
                    .split(separator: "\n").filter { !$0.contains("table local") }.joined(separator: "\n"))
                failures.append("seed \(String(seed, radix: 16)):\n  \(found.joined(separator: "\n  "))\nrules:\n\(rules)\nroutes:\n\(routes)")
                if failures.count >= 3 { break }
            }
            let table = try KernelStateDump.read(networkNamespace: host.name)
            for family in AddressFamily.allCases {
                switch KernelDifferential.ours(table, family: family, destination: InternetPath.candidates(for: family)[0]) {
                case .via: routed += 1
                case .refused: refused += 1
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) seeds disagree with the kernel:\n\(failures.joined(separator: "\n\n"))")
        // The generator reaches both outcomes plenty.
        #expect(routed > cases / 5 && refused > cases / 5, "routed \(routed), refused \(refused)")

        // The monitor kept up with the storm: its picture is a fresh dump's.
        let fresh = try KernelStateDump.read(networkNamespace: host.name)
        #expect(waitUntil(timeout: 10) { monitor.kernelState.rules == fresh.rules && Set(monitor.kernelState.allRoutes) == Set(fresh.allRoutes) })
        let expected = Classifier.classify(fresh.snapshot(kinds: Dictionary(uniqueKeysWithValues: fresh.links.map {
            ($0.key, $0.value.loopback ? InterfaceKind.loopback : .ethernet) })), since: Date())
        #expect(monitor.status.routing == expected.routing)
    }

    /// Random topologies in which the public resolvers' prefixes are routed elsewhere: reachd
    /// agrees with the kernel for every candidate, and the destination it asks about is one the
    /// kernel sends the way most of the address space goes (the default route over eth0), so
    /// the internet path does not move with the resolvers' routes.
    @Test(.needsRoot()) func resolversRoutedElsewhereLeaveTheInternetPath() throws {
        let (host, network) = try Self.host(links: 3)
        defer { host.destroy(); network.destroy() }
        let lookup = try RouteLookup(networkNamespace: host.name)
        var failures: [String] = []
        for n in 0..<UInt64(40) {
            let seed = 0xD15C_0000 + n
            try Self.batch(host, RandomRouting.reset)
            let commands = RandomRouting.resolversElsewhere(seed: seed, links: 3)
            try Self.batch(host, commands)
            let found = try KernelDifferential.disagreements(in: host)
            if !found.isEmpty { failures.append("seed \(String(seed, radix: 16)): \(found)") }
            let table = try KernelStateDump.read(networkNamespace: host.name)
            let status = Classifier.classify(table.snapshot(kinds: Dictionary(uniqueKeysWithValues: table.links.map {
                ($0.key, $0.value.loopback ? InterfaceKind.loopback : .ethernet) })), since: Date())
            for path in status.routing {
                let kernels = try KernelDifferential.kernels(lookup, destination: path.destination)
                if path.interface != "eth0" || kernels != .via(oifs: [Self.index(of: "eth0", in: table)], gateways: [path.gateway]) {
                    failures.append("seed \(String(seed, radix: 16)): \(path.family) \(path.destination) goes \(path.interface ?? "nowhere"), "
                                    + "kernel \(kernels)\n  \(commands.joined(separator: "\n  "))")
                }
            }
            if failures.count >= 3 { break }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n\n"))")
    }

    static func index(of name: String, in table: KernelStateTable) -> Int {
        table.links.first { $0.value.name == name }?.key ?? -1
    }

    /// The decoder reads every selector and action `ip rule` can set.
    @Test(.needsRoot()) func decodesEveryRuleSelector() throws {
        let (host, network) = try Self.host(links: 2)
        defer { host.destroy(); network.destroy() }
        try Self.batch(host, [
            "rule add not fwmark 0xca6c/0xffff pref 100 lookup 51820",
            "rule add from 10.0.0.0/8 to 1.0.0.0/8 tos 0x10 pref 101 prohibit",
            "rule add iif lo oif eth1 pref 102 blackhole",
            "rule add uidrange 1000-1999 ipproto tcp sport 1000-2000 dport 443 pref 103 unreachable",
            "rule add pref 104 lookup main suppress_prefixlength 0",
            "rule add pref 105 lookup main suppress_ifgroup 5",
            "rule add pref 106 goto 200",
            "rule add pref 107 nop",
            "rule add iif nosuchlink pref 108 lookup 7",
            "-6 rule add from fd00::/8 to 2606::/16 pref 100 lookup 52",
        ])
        let rules = try KernelStateDump.read(networkNamespace: host.name).rules
        func find(_ family: AddressFamily, _ priority: UInt32) -> RoutingRule? {
            rules.first { $0.family == family && $0.priority == priority }
        }
        let r100 = try #require(find(.ipv4, 100))
        #expect(r100.invert && r100.fwmark == 0xca6c && r100.fwmask == 0xffff && r100.action == .lookup(table: 51820))
        let r101 = try #require(find(.ipv4, 101))
        #expect(r101.source == RoutingRule.Prefix(address: "10.0.0.0", length: 8, family: .ipv4))
        #expect(r101.destination == RoutingRule.Prefix(address: "1.0.0.0", length: 8, family: .ipv4))
        #expect(r101.tos == 0x10 && r101.action == .prohibit)
        let r102 = try #require(find(.ipv4, 102))
        #expect(r102.inputInterface == "lo" && r102.outputInterface == "eth1" && r102.action == .blackhole && !r102.inputInterfaceDetached)
        let r103 = try #require(find(.ipv4, 103))
        #expect(r103.uidRange == 1000...1999 && r103.ipProtocol == 6 && r103.action == .unreachable)
        #expect(r103.sourcePorts == .init(1000, 2000) && r103.destinationPorts == .init(443, 443))
        #expect(find(.ipv4, 104)?.suppressPrefixLength == 0 && find(.ipv4, 104)?.suppressInterfaceGroup == nil)
        #expect(find(.ipv4, 105)?.suppressInterfaceGroup == 5 && find(.ipv4, 105)?.suppressPrefixLength == nil)
        #expect(find(.ipv4, 106)?.action == .goto(priority: 200))
        #expect(find(.ipv4, 107)?.action == .nop)
        #expect(find(.ipv4, 108)?.inputInterfaceDetached == true)
        let v6 = try #require(find(.ipv6, 100))
        #expect(v6.source == RoutingRule.Prefix(address: "fd00::", length: 8, family: .ipv6) && v6.action == .lookup(table: 52))
        // The kernel's own, in its order: local, main, default (IPv4); local, main (IPv6).
        #expect(rules.filter { $0.family == .ipv4 }.map(\.priority) == [0, 100, 101, 102, 103, 104, 105, 106, 107, 108, 32766, 32767])
        #expect(rules.filter { $0.family == .ipv6 }.map(\.priority) == [0, 100, 32766])
    }
}
}

extension SystemTests {
/// The topologies users run, built as their tools build them, with the monitor watching: what
/// reachd reports, and that it is the kernel's route.
@Suite struct PolicyRoutedTopologyTests {
    /// A host with eth0 (10.1.0.2/24, fd00:1::2/64) to a network namespace, a monitor on it, and
    /// a tun device `tunnel` with a reader (carrier) and addresses, when asked for.
    final class Topology: @unchecked Sendable {
        let host: TestNamespace, network: TestNamespace
        let sysfs: FakeSysfs
        let monitor: ReachabilityMonitor
        let recorder: EventRecorder
        var tun: TunReader?

        init(tunnel: String? = nil) throws {
            (host, network) = try PolicyRoutingKernelTests.host(links: 1)
            sysfs = try FakeSysfs()
            if let tunnel {
                try host.ip("tuntap add dev \(tunnel) mode tun")
                tun = try TunReader(namespace: host, name: tunnel)
                try host.ip("addr add 10.200.0.2/32 dev \(tunnel)")
                try host.ip("-6 addr add fd00:200::2/128 dev \(tunnel) nodad")
                try host.ip("link set \(tunnel) up")
            }
            monitor = ReachabilityMonitor(configuration: monitorConfiguration(host, sysfs: sysfs))
            try monitor.start()
            recorder = EventRecorder(monitor)
        }

        func destroy() {
            monitor.stop()
            tun?.stop()
            host.destroy(); network.destroy()
        }

        func disagreements(marks: [UInt32] = [0]) throws -> [String] {
            try KernelDifferential.disagreements(in: host, marks: marks)
        }
    }

    /// wg-quick's set-up, both families: the tunnel's table, its marked packets around it.
    @Test(.needsRoot(), arguments: [AddressFamily.ipv4, .ipv6])
    func wgQuickIsAVPNOverEthernet(_ family: AddressFamily) throws {
        let t = try Topology(tunnel: "wg0")
        defer { t.destroy() }
        let f = family == .ipv6 ? "-6 " : ""
        let gateway = family == .ipv6 ? "fd00:1::1" : "10.1.0.1"
        try t.host.ip("\(f)route add default via \(gateway) dev eth0 metric 100")
        try t.host.ip("\(f)route add default dev wg0 table 51820")
        try t.host.ip("\(f)rule add not fwmark 0xca6c table 51820")
        try t.host.ip("\(f)rule add table main suppress_prefixlength 0")
        let index = family == .ipv6 ? 1 : 0
        #expect(waitUntil { t.monitor.status.vpn?.name == "wg0" })
        let status = t.monitor.status
        #expect(status.status == .ethernet && status.primary?.name == "eth0" && status.gateways == [gateway])
        #expect(status.routing[index].interface == "wg0" && status.routing[index].table == 51820)
        #expect(ProbePath(status)?.interface == "wg0")
        #expect(try t.disagreements(marks: [0, 0xca6c]).isEmpty)
        #expect(t.recorder.events.contains { $0.reason.code == .ruleAdded })

        // wg-quick down: the rules go, the VPN with them.
        try t.host.ip("\(f)rule del not fwmark 0xca6c table 51820")
        #expect(waitUntil { t.monitor.status.vpn == nil })
        #expect(t.monitor.status.status == .ethernet && t.monitor.status.routing[index].interface == "eth0")
        #expect(t.recorder.events.last?.reason.code == .ruleRemoved)
        #expect(t.recorder.duplicates.isEmpty)
    }

    /// A Tailscale exit node: the tunnel's default in table 52, `lookup 52` at 5270.
    @Test(.needsRoot()) func tailscaleExitNodeIsAVPN() throws {
        let t = try Topology(tunnel: "tailscale0")
        defer { t.destroy() }
        try t.host.ip("route add default via 10.1.0.1 dev eth0")
        try t.host.ip("route add default dev tailscale0 table 52")
        try t.host.ip("rule add pref 5270 lookup 52")
        #expect(waitUntil { t.monitor.status.vpn?.name == "tailscale0" })
        #expect(t.monitor.status.primary?.name == "eth0" && t.monitor.status.gateways == ["10.1.0.1"])
        #expect(try t.disagreements() == [String]())
    }

    /// The default route in a table a rule selects (NetworkManager's ipv4.route-table,
    /// networkd's RouteTable=), both families: reachable, and the rule and table named.
    @Test(.needsRoot(), arguments: [AddressFamily.ipv4, .ipv6])
    func aDefaultInATableARuleSelects(_ family: AddressFamily) throws {
        let t = try Topology()
        defer { t.destroy() }
        let f = family == .ipv6 ? "-6 " : ""
        let gateway = family == .ipv6 ? "fd00:1::1" : "10.1.0.1"
        try t.host.ip("\(f)route add default via \(gateway) dev eth0 table 100")
        try t.host.ip("\(f)rule add pref 100 lookup 100")
        #expect(waitUntil { t.monitor.status.reachable })
        let path = t.monitor.status.routing[family == .ipv6 ? 1 : 0]
        #expect(t.monitor.status.status == .ethernet && path.table == 100 && path.rule == 100 && path.gateway == gateway)
        #expect(try t.disagreements() == [String]())
    }

    /// A kill switch above the real default, both families: not reachable, reason killSwitch;
    /// lifted: reachable again, an event.
    @Test(.needsRoot(), arguments: [AddressFamily.ipv4, .ipv6])
    func aKillSwitchIsNotReachable(_ family: AddressFamily) throws {
        let t = try Topology()
        defer { t.destroy() }
        let f = family == .ipv6 ? "-6 " : ""
        let gateway = family == .ipv6 ? "fd00:1::1" : "10.1.0.1"
        try t.host.ip("\(f)route add default via \(gateway) dev eth0 metric 100")
        #expect(waitUntil { t.monitor.status.reachable })
        try t.host.ip("\(f)route add unreachable default metric 10")
        #expect(waitUntil { t.recorder.events.last?.current.reachable == false })
        let blocked = try #require(t.recorder.events.last)
        #expect(blocked.reason.code == .killSwitch && blocked.current.status == .notReachable)
        #expect(blocked.current.routing[family == .ipv6 ? 1 : 0].result == .unreachable)
        #expect(try t.disagreements() == [String]())

        // The status is published before the observers hear of it: wait for the recorder.
        try t.host.ip("\(f)route del unreachable default metric 10")
        #expect(waitUntil { t.recorder.events.last?.current.reachable == true })
        #expect(t.recorder.events.last?.reason.code == .routeRemoved)

        // A rule can be one too.
        try t.host.ip("\(f)rule add pref 10 prohibit")
        #expect(waitUntil { t.recorder.events.last?.current.reachable == false })
        #expect(t.recorder.events.last?.reason.code == .killSwitch)
        try t.host.ip("\(f)rule del pref 10 prohibit")
        #expect(waitUntil { t.recorder.events.last?.current.reachable == true })
        #expect(t.recorder.events.last?.reason.code == .ruleRemoved)
        #expect(t.recorder.duplicates.isEmpty)
    }

    /// What worked before and must keep working: OpenVPN's halves over the default, a tun that
    /// holds the main default, a route through a nexthop object, ECMP, IPv6 only.
    @Test(.needsRoot()) func theOrdinaryTopologiesStillAgree() throws {
        let t = try Topology(tunnel: "tun0")
        defer { t.destroy() }
        try t.host.ip("route add default via 10.1.0.1 dev eth0 metric 100")
        try t.host.ip("route add 0.0.0.0/1 dev tun0")
        try t.host.ip("route add 128.0.0.0/1 dev tun0")
        #expect(waitUntil { t.monitor.status.vpn?.name == "tun0" })
        #expect(t.monitor.status.primary?.name == "eth0" && t.monitor.status.gateways == ["10.1.0.1"])
        #expect(try t.disagreements() == [String]())

        try t.host.ip("route del 0.0.0.0/1 dev tun0")
        try t.host.ip("route del 128.0.0.0/1 dev tun0")
        try t.host.ip("route del default via 10.1.0.1 dev eth0 metric 100")
        try t.host.ip("route add 203.0.113.7 via 10.1.0.1 dev eth0")
        try t.host.ip("route add default dev tun0")
        #expect(waitUntil { t.monitor.status.vpn?.name == "tun0" && t.monitor.status.gateways == ["10.1.0.1"] })
        #expect(t.monitor.status.primary?.name == "eth0", "the transport is the link with the route to the server")
        #expect(try t.disagreements() == [String]())

        try t.host.ip("route del default dev tun0")
        try t.host.ip("nexthop add id 7 via 10.1.0.1 dev eth0")
        try t.host.ip("route add default nhid 7")
        // A split tunnel beside it: routes for some prefixes only, 1.0.0.0/8 among them.
        try t.host.ip("route add 10.8.0.0/16 dev tun0")
        try t.host.ip("route add 1.0.0.0/8 dev tun0")
        // (The status is ethernet, without a VPN, before the split routes arrive too: wait for those.)
        #expect(waitUntil { t.monitor.status.routing.first?.destination == "8.8.8.8" }, "the look-up avoids the split tunnel's prefix")
        #expect(t.monitor.status.vpn == nil && t.monitor.status.status == .ethernet)
        #expect(try t.disagreements() == [String]())

        try t.host.ip("route del default nhid 7")
        try t.host.ip("-6 route add default nexthop via fd00:1::1 dev eth0 nexthop via fd00:1::3 dev eth0")
        #expect(waitUntil { t.monitor.status.ipv6 && !t.monitor.status.ipv4 })
        #expect(t.monitor.status.status == .ethernet && Set(t.monitor.status.gateways) == ["fd00:1::1", "fd00:1::3"])
        let found = try t.disagreements()
        #expect(found.isEmpty, "\(found)")
    }

    /// The connectivity check goes where apps' packets go: into the tunnel when rules make it
    /// the path (here a tunnel that delivers nothing: limited), and where the path moves when a
    /// rule moves it (the uplink, which answers: full).
    @Test(.needsRoot()) func theCheckFollowsTheTunnel() throws {
        let t = try Topology(tunnel: "wg0")
        defer { t.destroy() }
        // The check server at a public-looking address beyond the uplink's router.
        try t.network.ip("addr add 198.51.100.1/32 dev lo")
        let server = try ProbeServer(in: t.network, mode: .noContent)
        defer { server.stop() }
        try t.host.ip("route add default via 10.1.0.1 dev eth0 metric 100")
        try t.host.ip("route add default dev wg0 table 51820")
        try t.host.ip("rule add not fwmark 0xca6c table 51820")
        try t.host.ip("rule add table main suppress_prefixlength 0")
        #expect(waitUntil { t.monitor.status.vpn?.name == "wg0" })

        var configuration = ConnectivityChecker.Configuration()
        configuration.url = "http://198.51.100.1:\(server.port)/generate_204"
        configuration.intervalSeconds = 60
        configuration.initialBackoff = 0.5
        configuration.timeoutSeconds = 1
        let checker = ConnectivityChecker(configuration: configuration, target: t.monitor, networkNamespace: t.host.name)
        checker.attach(to: t.monitor)
        defer { checker.stop() }
        #expect(waitUntil(timeout: 15) { t.monitor.status.connectivity == .limited })
        #expect(server.requests.isEmpty, "nothing went around the tunnel")

        try t.host.ip("rule del not fwmark 0xca6c table 51820")
        #expect(waitUntil(timeout: 15) { t.monitor.status.connectivity == .full })
        #expect(t.monitor.status.vpn == nil && !server.requests.isEmpty)
    }
}
}
