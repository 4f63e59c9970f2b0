import Foundation
import ReachabilityCore
import ReachabilityLinux
import Testing
import TestSupport

extension ConnectivitySystemTests {
/// The checker with the real monitor, both in the lab's `host` namespace.
@Suite struct ConnectivityMonitorTests {
    private func start(_ lab: ProbeLab, sysfs: FakeSysfs, timeout: TimeInterval = 3)
        throws -> (ReachabilityMonitor, EventRecorder, ConnectivityChecker) {
        let monitor = ReachabilityMonitor(configuration: monitorConfiguration(lab.host, sysfs: sysfs))
        try monitor.start()
        let recorder = EventRecorder(monitor)
        let checker = ConnectivityChecker(configuration: checkerConfiguration(lab, timeout: timeout), target: monitor,
                                          networkNamespace: lab.host.name)
        checker.attach(to: monitor)
        return (monitor, recorder, checker)
    }

    /// Portal, then login: the monitor reports portal, then full, each once, with reason
    /// probeResult; the re-checks in between (same verdict) are no events.
    @Test(.needsRoot()) func portalThenLoginThroughTheMonitor() throws {
        let lab = try ProbeLab(mode: .redirect("http://portal.test/login"))
        defer { lab.destroy() }
        let sysfs = try FakeSysfs()
        let (monitor, recorder, checker) = try start(lab, sysfs: sysfs)
        defer { checker.stop(); monitor.stop() }

        #expect(waitUntil(timeout: 15) { monitor.status.connectivity == .portal })
        #expect(monitor.status.probe?.portalUrl == "http://portal.test/login")
        #expect(monitor.status.status == .ethernet)
        // Let the backoff re-check the portal a few times: same verdict, no new event.
        #expect(waitUntil(timeout: 15) { lab.server.requests.count >= 3 })
        try lab.server.set(.noContent)
        #expect(waitUntil(timeout: 30) { monitor.status.connectivity == .full })

        let probeEvents = recorder.events.filter { $0.reason.code == .probeResult }
        #expect(probeEvents.map(\.current.connectivity) == [.portal, .full])
        #expect(recorder.duplicates.isEmpty)
    }

    /// A check hangs (long timeout); the uplink's carrier goes: the monitor's event comes at
    /// once, and the checker answers it with `none` without waiting for the hanging check.
    @Test(.needsRoot()) func linkEventDuringAHangingCheckIsDeliveredAtOnce() throws {
        let lab = try ProbeLab(mode: .hang)
        defer { lab.destroy() }
        let sysfs = try FakeSysfs()
        let (monitor, recorder, checker) = try start(lab, sysfs: sysfs, timeout: 60)
        defer { checker.stop(); monitor.stop() }

        #expect(waitUntil(timeout: 15) { lab.server.requests.count == 1 })
        #expect(monitor.status.connectivity == .unknown)
        try lab.veth.dropCarrier()
        // Far less than the 60 s the hanging check may still take.
        #expect(waitUntil(timeout: 5) { recorder.events.contains { $0.reason.code == .carrierLost } })
        #expect(waitUntil(timeout: 5) { monitor.status.probe?.result == Connectivity.none })
        #expect(monitor.status.connectivity == Connectivity.none)
        #expect(!monitor.status.reachable)

        // Carrier back: a new check right away (the server now answers).
        try lab.server.set(.noContent)
        try lab.veth.restoreCarrier()
        #expect(waitUntil(timeout: 15) { monitor.status.connectivity == .full })
        #expect(recorder.duplicates.isEmpty)
    }
}
}
