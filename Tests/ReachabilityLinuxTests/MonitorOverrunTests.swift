import Foundation
import Testing
import ReachabilityCore
import ReachabilityLinux
import TestSupport

extension SystemTests {
/// Overrun and IPv6 cases against the kernel.
@Suite struct MonitorOverrunTests {
    /// A burst of 300 veth pairs while the monitor's queue is blocked and its socket buffer is
    /// tiny: the kernel overruns the socket, the monitor re-dumps and reports `resync`, and ends
    /// with exactly what a fresh monitor reads from the kernel.
    @Test(.needsRoot()) func burstWhileStalledResyncs() throws {
        let host = try TestNamespace(tag: "h"), network = try TestNamespace(tag: "n")
        defer { host.destroy(); network.destroy() }
        let sysfs = try FakeSysfs()
        _ = try VethUplink(host: host, uplink: network)
        var configuration = monitorConfiguration(host, sysfs: sysfs)
        configuration.receiveBufferSize = 4096
        let monitor = ReachabilityMonitor(configuration: configuration)
        try monitor.start()
        defer { monitor.stop() }
        let recorder = EventRecorder(monitor)
        #expect(monitor.status.status == .ethernet)

        // Stall the consumer, then make the kernel talk a lot.
        let release = DispatchSemaphore(value: 0)
        monitor.queue.async { release.wait() }
        let batch = NSTemporaryDirectory() + "\(TestResources.prefix)burst-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: batch) }
        let lines = (0..<300).map { "link add ova\($0) type veth peer name ovb\($0)" }.joined(separator: "\n") + "\n"
        try lines.write(toFile: batch, atomically: true, encoding: .utf8)
        try host.ip("-batch \(batch)")
        try host.ip("route del default via 10.77.0.1 dev eth0")
        release.signal()

        #expect(waitUntil(timeout: 30) { monitor.status.interfaces.count == 602 && monitor.status.status == .notReachable })
        #expect(monitor.overrunCount > 0)
        #expect(recorder.events.contains { $0.reason.code == .resync })
        #expect(recorder.duplicates.isEmpty)
        #expect(recorder.isChained)

        // A fresh dump agrees with the state the monitor recovered to.
        let fresh = ReachabilityMonitor(configuration: monitorConfiguration(host, sysfs: sysfs))
        try fresh.start()
        defer { fresh.stop() }
        #expect(waitUntil(timeout: 10) { !fresh.status.differs(from: monitor.status) })
        #expect(fresh.overrunCount == 0)

        // And the socket still delivers after the overrun.
        try host.ip("route add default via 10.77.0.1 dev eth0")
        #expect(waitUntil { monitor.status.status == .ethernet })
        #expect(recorder.duplicates.isEmpty)
    }

    /// IPv6: a tentative address is not usable; the same address without DAD is.
    @Test(.needsRoot()) func tentativeIPv6IsNotUsable() throws {
        let host = try TestNamespace(tag: "h"), network = try TestNamespace(tag: "n")
        defer { host.destroy(); network.destroy() }
        let sysfs = try FakeSysfs()
        _ = try VethUplink(host: host, uplink: network, defaultRoute: false)
        try network.ip("-6 addr add 2001:db8:77::1/64 dev up0 nodad")
        // Duplicate address detection that takes minutes keeps the address tentative for the test.
        try host.exec("sysctl -qw net.ipv6.conf.eth0.dad_transmits=200 net.ipv6.neigh.eth0.retrans_time_ms=1000")
        let monitor = ReachabilityMonitor(configuration: monitorConfiguration(host, sysfs: sysfs))
        try monitor.start()
        defer { monitor.stop() }
        let recorder = EventRecorder(monitor)

        try host.ip("-6 addr add 2001:db8:77::2/64 dev eth0")
        try host.ip("-6 route add default via 2001:db8:77::1 dev eth0 metric 100")
        // A marker after them: once the monitor has seen it, it has seen both (one ordered socket).
        try host.ip("addr add 192.0.2.9/32 dev lo")
        #expect(waitUntil { monitor.status.interfaces.first { $0.name == "lo" }?.addresses.contains("192.0.2.9/32") == true })
        #expect(try host.ip("-6 addr show dev eth0").contains("tentative"))
        #expect(monitor.status.status == .notReachable)
        #expect(!monitor.status.ipv6)
        #expect(monitor.status.interfaces.first { $0.name == "eth0" }?.addresses.contains("2001:db8:77::2/64") == false)

        try host.ip("-6 addr del 2001:db8:77::2/64 dev eth0")
        try host.ip("-6 addr add 2001:db8:77::2/64 dev eth0 nodad")
        try host.ip("-6 route replace default via 2001:db8:77::1 dev eth0 metric 100")
        #expect(waitUntil { monitor.status.status == .ethernet })
        #expect(monitor.status.ipv6)
        #expect(!monitor.status.ipv4)
        #expect(monitor.status.gateways == ["2001:db8:77::1"])
        #expect(recorder.duplicates.isEmpty)
        #expect(recorder.isChained)
    }
}
}
