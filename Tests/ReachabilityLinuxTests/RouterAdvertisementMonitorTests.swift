import Foundation
import Testing
import ReachabilityCore
@testable import ReachabilityLinux
import TestSupport

extension SystemTests {
/// Router advertisements sent from the uplink namespace (a raw ICMPv6 socket): the options the
/// kernel hands on reach the monitor's interface, with their lifetimes.
@Suite struct RouterAdvertisementMonitorTests {
    /// A monitor with a log that keeps its lines, and eth0 online over the uplink.
    private func withOnlineMonitor(_ body: (ReachabilityMonitor, VethUplink, Collector<String>) throws -> Void) throws {
        let host = try TestNamespace(tag: "h"), network = try TestNamespace(tag: "n")
        defer { host.destroy(); network.destroy() }
        let sysfs = try FakeSysfs()
        let lines = Collector<String>()
        let monitor = ReachabilityMonitor(configuration: monitorConfiguration(host, sysfs: sysfs),
                                          log: LogSink(threshold: .info) { level, message in lines.append("\(level): \(message)") })
        try monitor.start()
        defer { monitor.stop() }
        let uplink = try VethUplink(host: host, uplink: network)
        #expect(waitUntil(timeout: 10) { monitor.status.status == .ethernet })
        // Its link-local address settled first: that is an event of its own.
        let linkLocal = try #require(try uplink.settledLinkLocal())
        #expect(waitUntil(timeout: 10) { monitor.status.primary?.addresses.contains(linkLocal) == true })
        try body(monitor, uplink, lines)
    }

    private func send(_ uplink: VethUplink, _ options: [UInt8]...) throws {
        try RouterAdvertiser.send(from: uplink.uplink, interface: uplink.outer, options: options)
    }

    @Test(.needsRoot()) func optionsArriveAndExpire() throws {
        try withOnlineMonitor { monitor, uplink, _ in
            let recorder = EventRecorder(monitor)
            try send(uplink, RouterAdvertiser.rdnss(["2001:db8::53", "2001:db8::54"], lifetime: 3),
                     RouterAdvertiser.dnssl(["corp.example"], lifetime: 3),
                     RouterAdvertiser.pref64("64:ff9b::", lifetime: 8),
                     RouterAdvertiser.captivePortal("https://10.77.0.1:8443/capport"))
            #expect(waitUntil(timeout: 15) {
                let eth0 = monitor.status.primary
                return eth0?.dns == ["2001:db8::53", "2001:db8::54"] && eth0?.searchDomains == ["corp.example"]
                    && eth0?.nat64Prefix == "64:ff9b::/96" && eth0?.captivePortalApi == "https://10.77.0.1:8443/capport"
            }, "\(String(describing: monitor.status.primary))")
            // The status is published before the observers hear of it: wait for the recorder.
            #expect(waitUntil(timeout: 5) { recorder.events.last?.current == monitor.status })
            let announced = recorder.events.filter { $0.reason.code == .routerAdvertisement }
            #expect(!announced.isEmpty && announced.allSatisfy { $0.reason.interface == "eth0" })
            // The interface list says the same as the primary.
            #expect(monitor.status.interfaces.first { $0.name == "eth0" } == monitor.status.primary)

            // Three seconds on, the DNS facts run out; the NAT64 prefix (8 s) and the API (no lifetime) stay.
            #expect(waitUntil(timeout: 20) { monitor.status.primary?.dns == [] && monitor.status.primary?.searchDomains == [] })
            #expect(monitor.status.primary?.nat64Prefix == "64:ff9b::/96")
            let ranOut = { recorder.events.last { $0.previous?.primary?.dns.isEmpty == false && $0.current.primary?.dns == [] } }
            #expect(waitUntil(timeout: 5) { ranOut() != nil })
            let expired = ranOut()
            #expect(expired?.reason.code == .routerAdvertisement && expired?.reason.detail?.contains("gone") == true)
            #expect(waitUntil(timeout: 20) { monitor.status.primary?.nat64Prefix == nil })
            #expect(monitor.status.primary?.captivePortalApi == "https://10.77.0.1:8443/capport")

            // Lifetime 0 withdraws; the unrestricted URN withdraws the API.
            try send(uplink, RouterAdvertiser.rdnss(["2001:db8::99"], lifetime: 600))
            #expect(waitUntil(timeout: 15) { monitor.status.primary?.dns == ["2001:db8::99"] })
            try send(uplink, RouterAdvertiser.rdnss(["2001:db8::99"], lifetime: 0),
                     RouterAdvertiser.captivePortal(RouterOption.unrestricted))
            #expect(waitUntil(timeout: 15) { monitor.status.primary?.dns == [] && monitor.status.primary?.captivePortalApi == nil })
            #expect(recorder.duplicates.isEmpty && recorder.isChained)
        }
    }

    /// Options that do not fit their RFC (anyone on the link can send them) are logged and
    /// change nothing; a good one after them still arrives.
    @Test(.needsRoot()) func malformedOptionsAreIgnoredWithALog() throws {
        try withOnlineMonitor { monitor, uplink, lines in
            // Jumbo frames on both sides: the kernel drops fragmented neighbour discovery, and a
            // 2,000-byte URI does not fit 1,500.
            try uplink.host.ip("link set \(uplink.inner) mtu 9000")
            try uplink.uplink.ip("link set \(uplink.outer) mtu 9000")
            #expect(waitUntil(timeout: 10) { monitor.status.status == .ethernet })
            // The MTU change is a link event of its own. A marker after it (an address, an event
            // the monitor reports) arrives behind it on the same netlink socket: once the marker
            // is in the status, whatever the MTU change caused has been handled, and the recorder
            // (registered on the monitor's queue) hears only what comes after.
            try uplink.host.ip("addr add 192.0.2.9/32 dev \(uplink.inner)")
            #expect(waitUntil(timeout: 10) { monitor.status.primary?.addresses.contains("192.0.2.9/32") == true })
            let before = monitor.status
            let recorder = EventRecorder(monitor)
            try send(uplink, RouterAdvertiser.option(25, [0, 0, 0, 0, 0x0e, 0x10] + [UInt8](repeating: 0x20, count: 8)))      // half an address
            try send(uplink, RouterAdvertiser.option(31, [0, 0, 0, 0, 0, 60, 70] + [UInt8](repeating: 0x61, count: 20)))      // a 70-byte label
            try send(uplink, RouterAdvertiser.captivePortal([0x68, 0x74, 0x74, 0x70, 0x73, 0x3a, 0xff, 0xfe]))                // not UTF-8
            try send(uplink, RouterAdvertiser.captivePortal("https://10.77.0.1/" + String(repeating: "a", count: 1982)))        // 2,000 bytes
            try send(uplink, RouterAdvertiser.captivePortal("http://10.77.0.1/plain"))                                          // not https
            try send(uplink, RouterAdvertiser.option(38, [0, 7] + [UInt8](repeating: 0, count: 12)))                           // bad prefix length code
            #expect(waitUntil(timeout: 15) { lines.values.filter { $0.contains("ignored a router advertisement option") }.count >= 6 },
                    "\(lines.values)")
            let ignored = lines.values.filter { $0.contains("ignored a router advertisement option") }
            #expect(ignored.contains { $0.contains("option 25 (RDNSS)") && $0.contains("not 8 + 16 per address") && $0.contains("on eth0") })
            #expect(ignored.contains { $0.contains("option 31 (DNSSL)") && $0.contains("label of 70 bytes") })
            #expect(ignored.contains { $0.contains("option 38 (PREF64)") && $0.contains("prefix length code 7") })
            #expect(ignored.contains { $0.contains("not UTF-8") })
            #expect(ignored.contains { $0.contains("URI of 2000 bytes") })
            #expect(ignored.contains { $0.contains("neither an https URL") })
            #expect(recorder.events.isEmpty)
            #expect(monitor.status == before)

            try send(uplink, RouterAdvertiser.rdnss(["2001:db8::53"], lifetime: 600))
            #expect(waitUntil(timeout: 15) { recorder.events.last?.current.primary?.dns == ["2001:db8::53"] })
            #expect(recorder.events.count == 1 && recorder.events.first?.reason.code == .routerAdvertisement)
        }
    }

    /// What the network announced goes with the network: carrier lost, the facts are gone,
    /// in the same event.
    @Test(.needsRoot()) func carrierLossDropsTheAnnouncements() throws {
        try withOnlineMonitor { monitor, uplink, _ in
            try send(uplink, RouterAdvertiser.rdnss(["2001:db8::53"], lifetime: 600))
            #expect(waitUntil(timeout: 15) { monitor.status.primary?.dns == ["2001:db8::53"] })
            let recorder = EventRecorder(monitor)
            try uplink.dropCarrier()
            // The status is published before the observers hear of it: wait for the recorder.
            #expect(waitUntil(timeout: 10) { recorder.first { !$0.reachable } != nil })
            let lost = recorder.first { !$0.reachable }
            #expect(lost?.reason.code == .carrierLost)
            #expect(lost?.current.interfaces.first { $0.name == "eth0" }?.dns == [])
        }
    }
}
}
