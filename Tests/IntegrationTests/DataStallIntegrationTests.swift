import Foundation
import ReachabilityCore
import Testing
import TestSupport

/// Data stalls end to end, on a real kernel: reachd in a namespace whose uplink is a userspace
/// delay line, the connectivity check's server beyond it on its shipped schedule (every 300 s),
/// and an app's TCP connections through the line. A line of its own: each case waits on the
/// sock_diag dumps' real 10 s interval.
@Suite(.serialized, .dedicatedThreads) struct DataStallSystemTests {}

extension DataStallSystemTests {
    /// reachd behind a line of `rtt`, its check asking a server beyond the line every 300 s.
    final class StalledUplink: @unchecked Sendable {
        let host: TestNamespace, network: TestNamespace
        let line: DelayLine
        let server: ProbeServer
        let daemon: DaemonUnderTest
        private(set) var apps: [TrafficLoop] = []

        init(tag: String, subnet: Int, extra: String = "") throws {
            host = try TestNamespace(tag: tag)
            network = try TestNamespace(tag: tag + "n")
            do {
                line = try DelayLine(host: host, network: network, settings: .init(rtt: 0.04), subnet: subnet)
                server = try ProbeServer(in: network, mode: .noContent)
                let config = """
                    [Connectivity]
                    URL=http://\(line.remoteAddress):8080/generate_204
                    Timeout=3
                    [Cellular]
                    ModemManager=no
                    [Interfaces]
                    Kind.dl0=ethernet
                    NetworkManager=no
                    LeaseDirectory=/nonexistent/reachd-test-leases

                    """ + extra
                daemon = try DaemonUnderTest(namespace: host, config: config)
            } catch {
                host.destroy(); network.destroy()
                throw error
            }
        }

        /// `count` connections of an app, each a small request and answer every 200 ms.
        func startApps(_ count: Int) throws {
            for _ in 0..<count { apps.append(try TrafficLoop(through: line)) }
        }

        func status() -> Status? {
            guard let text = try? daemon.reachctl(["status", "--json"]).stdout else { return nil }
            return try? WireJSON.decoder().decode(Status.self, from: Data(text.utf8))
        }

        /// The checks the server answered so far.
        var checks: Int { server.requests.count }

        func destroy() {
            for app in apps { app.stop() }
            daemon.stop()
            server.stop()
            line.stop()
            host.destroy()
            network.destroy()
        }
    }

    /// The line drops everything under the app's traffic: within 30 s the uplink leaves `full`
    /// with reason `dataStall` and `Interface.stall` set, though the next scheduled check is
    /// minutes away; loss back to 0: `full` again within 30 s, the stall cleared.
    @Test(.needsRoot())
    func aDeadUplinkIsShownFromTheAppsTrafficAndComesBack() throws {
        let uplink = try StalledUplink(tag: "ds", subnet: 81)
        defer { uplink.destroy() }
        #expect(waitUntil(timeout: 20) { uplink.status()?.connectivity == .full }, "\(uplink.daemon.child.stderr)")
        let monitor = try SystemTests.EventTruthTests.Monitor(uplink.daemon)
        defer { monitor.stop() }
        #expect(monitor.await(1))
        try uplink.startApps(3)
        // Two dumps of working traffic: no stall, no check beyond the first.
        Thread.sleep(forTimeInterval: 12)
        let checksBefore = uplink.checks
        #expect(uplink.status()?.primary?.stall == nil)

        uplink.line.loss = 1
        let lost = Date()
        #expect(waitUntil(timeout: 30) { uplink.status().map { $0.connectivity != .full } == true },
                "\(String(describing: uplink.status())) \(uplink.daemon.child.stderr)")
        let left = Date().timeIntervalSince(lost)
        let status = try #require(uplink.status())
        let stall = try #require(status.primary?.stall, "\(status)")
        #expect(stall.method == .tcp && stall.failRate >= 0.8 && stall.sentSinceReceive >= 10 && stall.periodMs > 0)
        let moved = try #require(monitor.events.first { $0.current.connectivity != .full && $0.previous?.connectivity == .full })
        #expect(moved.reason.code == .dataStall && moved.reason.interface == "dl0", "\(moved.reason)")
        #expect(monitor.events.contains { $0.reason.code == .dataStall && $0.current.primary?.stall != nil })
        #expect(stall.recent.last.map { $0.received == 0 && $0.retransmitted > 0 } == true, "\(stall.recent)")
        let verbose = try uplink.daemon.reachctl(["status", "--verbose"]).stdout
        #expect(verbose.contains("uplink dl0 (ethernet) · primary · internet: \(status.connectivity.rawValue) · stalled ")
                    && verbose.contains("  stall: ") && verbose.contains(" · received 0 · retransmitted "), "\(verbose)")
        let summary = try uplink.daemon.reachctl(["status"]).stdout
        print("data stall: left full \(String(format: "%.1f", left)) s after the loss began; \(summary)")

        uplink.line.loss = 0
        let back = Date()
        #expect(waitUntil(timeout: 30) { uplink.status().map { $0.connectivity == .full && $0.primary?.stall == nil } == true },
                "\(String(describing: uplink.status())) \(uplink.daemon.child.stderr)")
        print("data stall: full again \(String(format: "%.1f", Date().timeIntervalSince(back))) s after the loss ended; "
              + "\(uplink.checks - checksBefore) checks meanwhile")
        SystemTests.EventTruthTests.checkFullStream(monitor.events, "stall")
    }

    /// 10 % loss under the app's traffic for a minute, dumped every 2 s (30 dumps), then an idle
    /// link: never a stall, and no check beyond the first.
    @Test(.needsRoot())
    func lossWithTrafficAndAnIdleLinkAreNoStall() throws {
        let uplink = try StalledUplink(tag: "dl", subnet: 82, extra: "[LinkQuality]\nInterval=2s\n")
        defer { uplink.destroy() }
        #expect(waitUntil(timeout: 20) { uplink.status()?.connectivity == .full }, "\(uplink.daemon.child.stderr)")
        let checks = uplink.checks
        uplink.line.loss = 0.1
        try uplink.startApps(3)
        var stalled = false
        for _ in 0..<60 {
            Thread.sleep(forTimeInterval: 1)
            if uplink.status()?.primary?.stall != nil { stalled = true }
        }
        #expect(!stalled, "\(uplink.daemon.child.stderr)")
        #expect(uplink.apps.allSatisfy { $0.statistics.exchanges > 0 })
        for app in uplink.apps { app.stop() }
        Thread.sleep(forTimeInterval: 10)
        #expect(uplink.status()?.primary?.stall == nil)
        #expect(uplink.status()?.connectivity == .full)
        #expect(uplink.checks == checks, "no check but the first: \(uplink.checks - checks) more")
    }

    /// A server that stops answering one of the app's connections, beside two that keep
    /// working over the same uplink: their answers veto the stall; no stall for a minute, and
    /// at most one check beyond the first.
    @Test(.needsRoot())
    func aDeadServerBesideWorkingTrafficIsNoStall() throws {
        let uplink = try StalledUplink(tag: "dd", subnet: 83)
        defer { uplink.destroy() }
        #expect(waitUntil(timeout: 20) { uplink.status()?.connectivity == .full }, "\(uplink.daemon.child.stderr)")
        let checks = uplink.checks
        let dead = "198.18.83.2"
        _ = try uplink.network.ip("addr add \(dead)/32 dev lo")
        let doomed = try TrafficLoop(client: uplink.host, server: uplink.network, address: dead)
        defer { doomed.stop() }
        try uplink.startApps(2)
        Thread.sleep(forTimeInterval: 3)
        // The server's address goes: what the app sends it is never answered.
        _ = try uplink.network.ip("addr del \(dead)/32 dev lo")
        var stalled = false
        for _ in 0..<60 {
            Thread.sleep(forTimeInterval: 1)
            if uplink.status()?.primary?.stall != nil { stalled = true }
        }
        #expect(!stalled, "\(uplink.daemon.child.stderr)")
        #expect((doomed.kernelRTT?.totalRetransmits ?? 0) >= 2, "the dead connection retransmitted")
        #expect(uplink.status()?.connectivity == .full)
        #expect(uplink.checks - checks <= 1, "\(uplink.checks - checks) checks beyond the first")
    }
}
