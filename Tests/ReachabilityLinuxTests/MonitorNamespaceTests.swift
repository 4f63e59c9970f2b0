import Foundation
import Testing
import ReachabilityCore
import ReachabilityHost
import ReachabilityLinux
import Synchronization
import TestSupport

extension SystemTests {
/// The monitor against real kernel objects in network namespaces made by each test.
@Suite struct MonitorNamespaceTests {
    /// At debug level the monitor logs, after its observers returned, how long an event a
    /// netlink message caused took: one timing line per such event, none for the others.
    @Test(.needsRoot()) func timingLoggedForNetlinkEventsOnly() throws {
        let lines = Mutex([String]())
        let log = LogSink(threshold: .debug) { _, line in lines.withLock { $0.append(line) } }
        let timingLine = /#(\d+) timing: netlink read to event (\d+) µs, to the observers' return (\d+) µs/
        try withStartedMonitor(log: log) { monitor, host, network, sysfs in
            let events = Mutex([ReachabilityEvent]())
            let token = monitor.addObserver { event in events.withLock { $0.append(event) } }
            defer { monitor.removeObserver(token) }

            let uplink = try VethUplink(host: host, uplink: network)
            defer { withExtendedLifetime(uplink) {} }
            #expect(waitUntil { monitor.status.status == .ethernet })
            // Logged on the monitor's queue after the observers: once the queue has run, every
            // event seen so far has its line.
            let linkEvents = monitor.queue.sync { events.withLock { $0 } }
            #expect(!linkEvents.isEmpty)
            func timings() -> [Int: (event: Int, returned: Int)] {
                var found: [Int: (event: Int, returned: Int)] = [:]
                for line in lines.withLock({ $0 }) {
                    guard let match = line.firstMatch(of: timingLine), let sequence = Int(match.1),
                          let event = Int(match.2), let returned = Int(match.3) else { continue }
                    found[sequence] = (event, returned)
                }
                return found
            }
            let linkTimings = timings()
            for event in linkEvents {
                let timing = try #require(linkTimings[event.sequence], "event \(event.sequence) (\(event.reason.code)) has no timing")
                #expect(timing.event <= timing.returned)
            }
            #expect(linkTimings.count == linkEvents.count)

            // A verdict of the connectivity checker is an event no netlink message caused.
            let path = try #require(ProbePath(monitor.status))
            let full = Probe(url: "http://127.0.0.1/check", result: .full, httpStatus: 204, checkedAt: Date())
            monitor.setProbe(full, path: path)
            #expect(waitUntil { monitor.status.connectivity == .full })
            let verdict = try #require(monitor.queue.sync { events.withLock { $0.last { $0.reason.code == .probeResult } } })
            #expect(verdict.current.connectivity == .full)
            #expect(timings()[verdict.sequence] == nil)
        }
    }

    /// Every `now` of the monitor comes from its clock: a clock whose wall reads 2001 stamps the
    /// events and `since` with 2001, and the debounce timer runs on its boot time.
    @Test(.needsRoot()) func eventsAreStampedByTheInjectedClock() throws {
        let host = try TestNamespace(tag: "ck"), network = try TestNamespace(tag: "ckn")
        defer { host.destroy(); network.destroy() }
        let sysfs = try FakeSysfs()
        let wall = Date(timeIntervalSince1970: 978_307_200)
        let clock = ReachdClock { ClockReading(wall: wall, uptime: ReachdClock.bootTimeSeconds()) }
        var configuration = monitorConfiguration(host, sysfs: sysfs)
        configuration.monitor.debounceMilliseconds = 50
        let monitor = ReachabilityMonitor(configuration: configuration, clock: clock)
        try monitor.start()
        defer { monitor.stop() }
        #expect(monitor.initialEvent().timestamp == wall)
        let recorder = EventRecorder(monitor)
        let uplink = try VethUplink(host: host, uplink: network)
        defer { withExtendedLifetime(uplink) {} }
        #expect(waitUntil { monitor.status.status == .ethernet })
        let event = try #require(recorder.events.last)
        #expect(event.timestamp == wall && event.current.since == wall)
    }

    @Test(.needsRoot()) func ethernetCarrierLossAndLinkDown() throws {
        try withStartedMonitor { monitor, host, network, sysfs in
            #expect(monitor.status.status == .notReachable)
            #expect(monitor.status.interfaces.map(\.name) == ["lo"])
            let recorder = EventRecorder(monitor)

            let uplink = try VethUplink(host: host, uplink: network)
            #expect(waitUntil { monitor.status.status == .ethernet })
            let online = monitor.status
            #expect(online.primary?.name == "eth0")
            #expect(online.primary?.kind == .ethernet)
            #expect(online.gateways == ["10.77.0.1"])
            #expect(online.ipv4)
            #expect(online.flags.contains(.reachable))
            #expect(online.primary?.addresses.contains("10.77.0.2/24") == true)

            var seen = recorder.events.count
            try uplink.dropCarrier()
            #expect(waitUntil { monitor.status.status == .notReachable })
            let lost = recorder.first(after: seen) { $0.status == .notReachable }
            #expect(lost?.reason.code == .carrierLost)
            #expect(lost?.reason.interface == "eth0")
            #expect(lost?.previous?.status == .ethernet)
            #expect(monitor.status.interfaces.first { $0.name == "eth0" }?.carrier == false)

            seen = recorder.events.count
            try uplink.restoreCarrier()
            #expect(waitUntil { monitor.status.status == .ethernet })
            #expect(recorder.first(after: seen) { $0.status == .ethernet }?.reason.code == .carrierGained)

            seen = recorder.events.count
            try host.ip("link set eth0 down")
            #expect(waitUntil { monitor.status.status == .notReachable })
            let down = recorder.first(after: seen) { $0.status == .notReachable }
            #expect(down?.reason.code == .linkDown)
            #expect(down?.reason.interface == "eth0")

            // The IPv4 default route went with the link (no RTM_DELROUTE): bringing it up is not enough.
            seen = recorder.events.count
            try host.ip("link set eth0 up")
            #expect(waitUntil { monitor.status.interfaces.first { $0.name == "eth0" }?.carrier == true })
            #expect(monitor.status.status == .notReachable)
            #expect(monitor.status.flags.contains(.connectionRequired))
            try host.ip("route add default via 10.77.0.1 dev eth0")
            #expect(waitUntil { monitor.status.status == .ethernet })
            #expect(recorder.first(after: seen) { $0.status == .ethernet }?.reason.code == .routeAdded)

            // Deleting the link removes everything about it.
            seen = recorder.events.count
            try host.ip("link del eth0")
            #expect(waitUntil { monitor.status.interfaces.map(\.name) == ["lo"] })
            #expect(monitor.status.status == .notReachable)
            #expect(recorder.first(after: seen) { $0.status == .notReachable }.map { [.linkDown, .linkRemoved].contains($0.reason.code) } == true)

            #expect(recorder.duplicates.isEmpty)
            #expect(recorder.isChained)
        }
    }

    /// A link named with a byte that is not UTF-8 (`w\xff0`): sysfs is asked under the
    /// kernel's own bytes (here a fake tree marks it wireless), while the name people see has
    /// U+FFFD in that place.
    @Test(.needsRoot()) func nonUTF8NameIsLookedUpInSysfsByItsBytes() throws {
        let host = try TestNamespace(tag: "h"), network = try TestNamespace(tag: "n")
        defer { host.destroy(); network.destroy() }
        let sysfs = try FakeSysfs()
        _ = try VethUplink(host: host, uplink: network)
        let script = """
        import os, subprocess, sys
        name = b"w\\xff0"
        ns, root = sys.argv[1].encode(), sys.argv[2].encode()
        for args in ([b"link", b"set", b"eth0", b"down"], [b"link", b"set", b"eth0", b"name", name], [b"link", b"set", name, b"up"],
                     [b"route", b"replace", b"default", b"via", b"10.77.0.1", b"dev", name]):
            subprocess.run([b"ip", b"-n", ns] + args, check=True)
        os.makedirs(root + b"/class/net/" + name + b"/wireless")
        """
        let made = try run("/usr/bin/python3", ["-c", script, host.name, sysfs.root])
        #expect(made.status == 0, "\(made.stderr)")
        let monitor = ReachabilityMonitor(configuration: monitorConfiguration(host, sysfs: sysfs))
        try monitor.start()
        defer { monitor.stop() }
        #expect(waitUntil { monitor.status.reachable })
        #expect(monitor.status.primary?.name == "w\u{FFFD}0")
        #expect(monitor.status.status == .wifi, "\(monitor.status.status)")
        #expect(monitor.status.primary?.kind == .wifi)
    }

    @Test(.needsRoot()) func metricSwitchChangesPrimary() throws {
        let host = try TestNamespace(tag: "h"), network = try TestNamespace(tag: "n")
        defer { host.destroy(); network.destroy() }
        let sysfs = try FakeSysfs()
        _ = try VethUplink(host: host, uplink: network, inner: "eth0", outer: "up0", subnet: 77, metric: 100)
        _ = try VethUplink(host: host, uplink: network, inner: "eth1", outer: "up1", subnet: 78, metric: 200)
        let monitor = ReachabilityMonitor(configuration: monitorConfiguration(host, sysfs: sysfs))
        try monitor.start()
        defer { monitor.stop() }
        let recorder = EventRecorder(monitor)
        // The initial dump already sees both uplinks.
        #expect(monitor.status.primary?.name == "eth0")
        #expect(monitor.status.gateways == ["10.77.0.1"])

        try host.ip("route del default via 10.77.0.1 dev eth0 metric 100")
        try host.ip("route add default via 10.77.0.1 dev eth0 metric 300")
        #expect(waitUntil { monitor.status.primary?.name == "eth1" })
        #expect(monitor.status.status == .ethernet)
        #expect(monitor.status.gateways == ["10.78.0.1"])
        let switched = recorder.first { $0.primary?.name == "eth1" }
        #expect(switched?.previous?.primary?.name == "eth0")
        #expect(switched.map { [.routeRemoved, .routeAdded].contains($0.reason.code) } == true)

        try host.ip("route replace default via 10.77.0.1 dev eth0 metric 300")   // no change at all
        try host.ip("route add default via 10.77.0.1 dev eth0 metric 150")
        #expect(waitUntil { monitor.status.primary?.name == "eth0" })
        #expect(recorder.duplicates.isEmpty)
        #expect(recorder.isChained)
    }

    @Test(.needsRoot()) func tunWithDefaultRouteIsVPNOverEthernet() throws {
        try withStartedMonitor { monitor, host, network, sysfs in
            let recorder = EventRecorder(monitor)
            _ = try VethUplink(host: host, uplink: network)
            #expect(waitUntil { monitor.status.status == .ethernet })

            try host.ip("tuntap add dev tun0 mode tun")
            let reader = try TunReader(namespace: host, name: "tun0")
            defer { reader.stop() }
            try host.ip("addr add 10.8.0.2/24 dev tun0")
            try host.ip("link set tun0 up")
            #expect(waitUntil { monitor.status.interfaces.first { $0.name == "tun0" }?.carrier == true })
            #expect(monitor.status.interfaces.first { $0.name == "tun0" }?.kind == .vpn)
            try host.ip("route add default dev tun0 metric 50")
            #expect(waitUntil { monitor.status.vpn?.name == "tun0" })
            let status = monitor.status
            #expect(status.status == .ethernet)
            #expect(status.primary?.name == "eth0")
            #expect(status.flags.contains(.transientConnection))
            #expect(recorder.first { $0.vpn != nil }?.reason.code == .routeAdded)

            // The reader goes away: the tun loses carrier and the VPN is gone.
            reader.stop()
            #expect(waitUntil { monitor.status.vpn == nil })
            #expect(monitor.status.status == .ethernet)
            #expect(recorder.duplicates.isEmpty)
            #expect(recorder.isChained)
        }
    }

    @Test(.needsRoot()) func fakeSysfsMarksWifiAndOverridesWin() throws {
        let host = try TestNamespace(tag: "h"), network = try TestNamespace(tag: "n")
        defer { host.destroy(); network.destroy() }
        let sysfs = try FakeSysfs()
        try sysfs.mark("wlan0", devtype: "wlan")
        try sysfs.mark("eth1", devtype: "wlan")
        _ = try VethUplink(host: host, uplink: network, inner: "wlan0", outer: "up0", subnet: 77, metric: 100)
        var configuration = monitorConfiguration(host, sysfs: sysfs)
        configuration.interfaces.metered = ["wl*"]
        let monitor = ReachabilityMonitor(configuration: configuration)
        try monitor.start()
        defer { monitor.stop() }
        let recorder = EventRecorder(monitor)
        #expect(monitor.status.status == .wifi)
        #expect(monitor.status.primary?.kind == .wifi)
        #expect(monitor.status.expensive)

        // An override by glob beats sysfs; reconfiguring re-decides and says why.
        configuration.interfaces.kinds = [.init(glob: "wlan[0-9]", kind: .wwan)]
        configuration.interfaces.metered = []
        monitor.reconfigure(configuration)
        #expect(monitor.status.status == .wwan)
        #expect(recorder.events.last?.reason.code == .configReloaded)

        // Ignored interfaces disappear.
        configuration.monitor.ignoreInterfaces = ["wlan*"]
        monitor.reconfigure(configuration)
        #expect(monitor.status.status == .notReachable)
        #expect(!monitor.status.interfaces.contains { $0.name == "wlan0" })
        #expect(recorder.duplicates.isEmpty)
    }

    @Test(.needsRoot()) func streamStartsWithInitialAndFollowsChanges() async throws {
        let host = try TestNamespace(tag: "h"), network = try TestNamespace(tag: "n")
        defer { host.destroy(); network.destroy() }
        let sysfs = try FakeSysfs()
        var configuration = monitorConfiguration(host, sysfs: sysfs)
        configuration.firstSequence = 1000
        configuration.monitor.debounceMilliseconds = 50
        let monitor = ReachabilityMonitor(configuration: configuration)
        try monitor.start()
        var iterator = monitor.events().makeAsyncIterator()
        let initial = await iterator.next()
        #expect(initial?.event == .initial)
        #expect(initial?.sequence == 1000)
        #expect(initial?.previous == nil)
        _ = try VethUplink(host: host, uplink: network)
        var reached: ReachabilityEvent?
        while let event = await iterator.next() {
            #expect(event.event == .reachabilityChanged)
            if event.current.status == .ethernet { reached = event; break }
        }
        #expect(reached?.sequence ?? 0 > 1000)
        // Later changes (IPv6 link-local addresses finishing DAD) may have followed.
        #expect(monitor.initialEvent().sequence >= reached?.sequence ?? .max)
        monitor.stop()
        // The stream hands out what it buffered, then finishes.
        var last = reached
        while let event = await iterator.next() { last = event }
        #expect(last?.sequence == monitor.initialEvent().sequence)
    }

    /// With a hold-down, a carrier flap that ends before the evaluation is no event at all.
    @Test(.needsRoot()) func debounceAbsorbsAFlap() throws {
        let host = try TestNamespace(tag: "h"), network = try TestNamespace(tag: "n")
        defer { host.destroy(); network.destroy() }
        let sysfs = try FakeSysfs()
        let uplink = try VethUplink(host: host, uplink: network)
        var configuration = monitorConfiguration(host, sysfs: sysfs)
        configuration.monitor.debounceMilliseconds = 3000
        let monitor = ReachabilityMonitor(configuration: configuration)
        try monitor.start()
        defer { monitor.stop() }
        #expect(waitUntil(timeout: 10) { monitor.status.status == .ethernet })
        let recorder = EventRecorder(monitor)

        let begin = Date()
        try uplink.dropCarrier()
        try uplink.restoreCarrier()
        let flapTook = Date().timeIntervalSince(begin)
        // A marker change after the flap: its event comes from the same (held-down) evaluation.
        try host.ip("addr add 192.0.2.9/32 dev lo")
        #expect(waitUntil(timeout: 15) { monitor.status.interfaces.first { $0.name == "lo" }?.addresses.contains("192.0.2.9/32") == true })
        // Two `ip` commands take milliseconds; a flap slower than the hold-down cannot be judged,
        // and that is a failure, never a pass.
        #expect(flapTook < 3, "the flap took \(flapTook) s, as long as the hold-down: the machine is overloaded")
        #expect(!recorder.events.contains { $0.current.status == .notReachable })
        #expect(!recorder.events.contains { $0.current.interfaces.contains { $0.name == "eth0" && !$0.carrier } })
        #expect(monitor.status.status == .ethernet)
        #expect(recorder.duplicates.isEmpty)
    }

    /// Observers registered before `start()` hear about the state it reads; a restart goes on numbering.
    @Test(.needsRoot()) func observersBeforeStartAndRestart() throws {
        let host = try TestNamespace(tag: "h"), network = try TestNamespace(tag: "n")
        defer { host.destroy(); network.destroy() }
        let sysfs = try FakeSysfs()
        let uplink = try VethUplink(host: host, uplink: network)
        var configuration = monitorConfiguration(host, sysfs: sysfs)
        configuration.firstSequence = 500
        let monitor = ReachabilityMonitor(configuration: configuration)
        let recorder = EventRecorder(monitor)
        #expect(monitor.status.status == .notReachable)
        try monitor.start()
        #expect(monitor.status.status == .ethernet)
        #expect(recorder.events.map(\.sequence) == [501])
        #expect(recorder.events.first?.reason.code == .resync)

        monitor.stop()
        try uplink.dropCarrier()
        try monitor.start()
        defer { monitor.stop() }
        #expect(monitor.status.status == .notReachable)
        #expect(recorder.events.last?.sequence == 502)
        #expect(recorder.events.last?.reason.code == .resync)
        #expect(recorder.duplicates.isEmpty)
        #expect(recorder.isChained)
    }

    /// A bridge over the veth is `ethernet` (kind bridge); the AF_BRIDGE RTM_DELLINK a port sends
    /// when it leaves the bridge is not a link deletion.
    @Test(.needsRoot()) func bridgeAndItsPorts() throws {
        try withStartedMonitor { monitor, host, network, sysfs in
            let recorder = EventRecorder(monitor)
            _ = try VethUplink(host: host, uplink: network, defaultRoute: false)
            try host.ip("addr flush dev eth0")
            try host.ip("link add br0 type bridge stp_state 0 forward_delay 0")
            try host.ip("link set eth0 master br0")
            // An address on the port, which must survive the port leaving the bridge.
            try host.ip("addr add 192.0.2.77/32 dev eth0")
            try host.ip("addr add 10.77.0.2/24 dev br0")
            try host.ip("link set br0 up")
            try host.ip("route add default via 10.77.0.1 dev br0")
            #expect(waitUntil(timeout: 10) { monitor.status.primary?.name == "br0" })
            #expect(monitor.status.status == .ethernet)
            #expect(monitor.status.primary?.kind == .bridge)

            try host.ip("link set eth0 nomaster")
            #expect(waitUntil { monitor.status.status == .notReachable })
            try host.ip("addr add 192.0.2.9/32 dev lo")
            #expect(waitUntil { monitor.status.interfaces.first { $0.name == "lo" }?.addresses.contains("192.0.2.9/32") == true })
            #expect(monitor.status.interfaces.first { $0.name == "eth0" }?.kind == .ethernet)
            #expect(monitor.status.interfaces.first { $0.name == "eth0" }?.addresses.contains("192.0.2.77/32") == true)
            #expect(recorder.duplicates.isEmpty)
            #expect(recorder.isChained)
        }
    }

    /// Kinds as the kernel reports them (rtnl kind, ARPHRD), and an override by glob.
    @Test(.needsRoot()) func kindsOfKernelLinks() throws {
        let host = try TestNamespace(tag: "h"), network = try TestNamespace(tag: "n")
        defer { host.destroy(); network.destroy() }
        let sysfs = try FakeSysfs()
        var configuration = monitorConfiguration(host, sysfs: sysfs)
        configuration.interfaces.kinds = [.init(glob: "usb*", kind: .wwan)]
        let monitor = ReachabilityMonitor(configuration: configuration)
        try monitor.start()
        defer { monitor.stop() }
        _ = try VethUplink(host: host, uplink: network)
        try host.ip("link add mv0 link eth0 type macvlan mode bridge")
        try host.ip("link add vx0 type vxlan id 42 dstport 4789 dev eth0")
        try host.ip("link add br1 type bridge")
        try host.ip("tuntap add dev tap0 mode tap")
        try host.ip("tuntap add dev tun1 mode tun")
        try host.ip("link add usb0 type veth peer name usb1")
        let expected: [String: InterfaceKind] = [
            "lo": .loopback, "eth0": .ethernet, "mv0": .ethernet, "vx0": .virtual, "br1": .bridge,
            "tap0": .vpn, "tun1": .vpn, "usb0": .wwan, "usb1": .wwan,
        ]
        #expect(waitUntil { monitor.status.interfaces.count == expected.count })
        let kinds = Dictionary(uniqueKeysWithValues: monitor.status.interfaces.map { ($0.name, $0.kind) })
        #expect(kinds == expected)
    }
}
}
