import Foundation
import ReachabilityCore
import ReachabilityLinux
import TestSupport
import Testing

/// What a `LogindSleepMonitor` told its owner, and what it logged.
final class SleepRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var _events: [String] = []
    private var _logs: [String] = []
    private var _prepared: (@Sendable () -> Void)?
    var events: [String] { lock.withLock { _events } }
    var logs: [String] { lock.withLock { _logs } }
    /// What `onSleep` was given: call it when the sleeping status is out.
    var prepared: (@Sendable () -> Void)? { lock.withLock { _prepared } }
    func record(_ event: String, prepared: (@Sendable () -> Void)? = nil) {
        lock.withLock { _events.append(event); if let prepared { _prepared = prepared } }
    }
    func log(_ line: String) { lock.withLock { _logs.append(line) } }

    /// A recorder and its started monitor on `bus`, once the monitor holds logind's inhibitor.
    static func monitorHoldingInhibitor(on bus: PrivateBus) throws -> (SleepRecorder, LogindSleepMonitor) {
        let recorder = SleepRecorder()
        let monitor = recorder.startMonitor(busAddress: bus.address)
        try #require(waitUntil(timeout: 10) { monitor.holdsInhibitor }, "\(recorder.logs)")
        return (recorder, monitor)
    }

    /// A monitor that tells this recorder, started.
    func startMonitor(busAddress: String, sleepLimit: Double = SleepCoordinator.defaultSleepLimit) -> LogindSleepMonitor {
        let monitor = LogindSleepMonitor(busAddress: busAddress, log: LogSink(threshold: .debug) { [self] _, line in log(line) },
                                         sleepLimit: sleepLimit,
                                         onSleep: { [self] prepared in record("sleep", prepared: prepared) },
                                         onWake: { [self] in record("wake") })
        monitor.start()
        return monitor
    }
}

extension SystemTests {
@Suite(.serialized) struct LogindSleepMonitorTests {
    /// The inhibitor is held while awake, still held when the sleep is announced, released only
    /// when reachd says its status is out, and taken again after wake (logind's own list shows it).
    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func sleepAndWakeWithADelayInhibitor() throws {
        let bus = try PrivateBus()
        let logind = try LogindMock(bus: bus)
        let (recorder, monitor) = try SleepRecorder.monitorHoldingInhibitor(on: bus)
        defer { monitor.stop() }
        #expect(try logind.inhibitors() == ["sleep reachd delay"])

        try logind.prepareForSleep(true)
        #expect(waitUntil(timeout: 10) { recorder.events == ["sleep"] }, "\(recorder.logs)")
        #expect(monitor.holdsInhibitor)
        #expect(try logind.inhibitors().count == 1)
        let prepared = try #require(recorder.prepared)
        prepared()
        #expect(waitUntil(timeout: 10) { !monitor.holdsInhibitor })
        #expect(waitUntil(timeout: 10) { (try? logind.inhibitors()) == [] })

        try logind.prepareForSleep(false)
        #expect(waitUntil(timeout: 10) { recorder.events == ["sleep", "wake"] }, "\(recorder.logs)")
        #expect(waitUntil(timeout: 10) { monitor.holdsInhibitor })
        #expect(waitUntil(timeout: 10) { (try? logind.inhibitors()) == ["sleep reachd delay"] })
        // Closing reachd's end is what releases it.
        monitor.stop()
        #expect(waitUntil(timeout: 10) { (try? logind.inhibitors()) == [] })
    }

    /// A local peer sends a PrepareForSleep that looks like logind's, broadcast and addressed
    /// to reachd: nothing happens, the inhibitor stays; logind's own signal is still followed.
    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func forgedPrepareForSleepChangesNothing() throws {
        let bus = try PrivateBus()
        let logind = try LogindMock(bus: bus)
        let (recorder, monitor) = try SleepRecorder.monitorHoldingInhibitor(on: bus)
        defer { monitor.stop() }

        let sent = try sh("\(Binaries.python) \(Paths.packageRoot)/Tests/python/forge_signal.py '\(bus.address)' prepare-for-sleep")
        #expect((Int(sent.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) >= 2, "\(sent.output)")
        #expect(waitUntil(timeout: 10) { recorder.logs.contains { $0.contains("ignoring PrepareForSleep from :") } }, "\(recorder.logs)")
        #expect(monitor.holdsInhibitor)

        // The marker: logind's real signal is the one event.
        try logind.prepareForSleep(true)
        #expect(waitUntil(timeout: 10) { !recorder.events.isEmpty })
        #expect(recorder.events == ["sleep"])
        #expect(try logind.inhibitors().count == 1)
    }

    /// PrepareForSleep(true) and never a false: after the limit (1 s here) the monitor wakes
    /// its owner, logs why, and holds the inhibitor again; logind's late false changes nothing.
    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func aSleepWithNoEndIsAWakeAfterTheLimit() throws {
        let bus = try PrivateBus()
        let logind = try LogindMock(bus: bus)
        let recorder = SleepRecorder()
        let monitor = recorder.startMonitor(busAddress: bus.address, sleepLimit: 1)
        defer { monitor.stop() }
        #expect(waitUntil(timeout: 10) { monitor.holdsInhibitor }, "\(recorder.logs)")

        try logind.prepareForSleep(true)
        #expect(waitUntil(timeout: 10) { recorder.events == ["sleep"] }, "\(recorder.logs)")
        let prepared = try #require(recorder.prepared)
        prepared()
        #expect(waitUntil(timeout: 10) { recorder.events == ["sleep", "wake"] }, "\(recorder.logs)")
        #expect(recorder.logs.contains { $0.contains("logind announced no wake 1 s (awake time) after PrepareForSleep(true)") },
                "\(recorder.logs)")
        #expect(waitUntil(timeout: 10) { monitor.holdsInhibitor })
        #expect(waitUntil(timeout: 10) { (try? logind.inhibitors()) == ["sleep reachd delay"] })

        try logind.prepareForSleep(false)
        // The marker: a second sleep is the next thing the recorder hears of.
        try logind.prepareForSleep(true)
        #expect(waitUntil(timeout: 10) { recorder.events.count >= 3 }, "\(recorder.logs)")
        #expect(recorder.events == ["sleep", "wake", "sleep"])
    }

    /// No logind on the bus (a container): said once at info, nothing else; when logind
    /// starts, it is followed and the inhibitor taken.
    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func withoutLogindNothingChanges() throws {
        let bus = try PrivateBus()
        let recorder = SleepRecorder()
        let monitor = recorder.startMonitor(busAddress: bus.address)
        defer { monitor.stop() }
        #expect(waitUntil(timeout: 10) { recorder.logs.contains { $0.contains("logind is not running") } }, "\(recorder.logs)")
        #expect(!monitor.followsLogind && !monitor.holdsInhibitor)

        let logind = try LogindMock(bus: bus)
        #expect(waitUntil(timeout: 10) { monitor.holdsInhibitor }, "\(recorder.logs)")
        #expect(try logind.inhibitors() == ["sleep reachd delay"])
        #expect(recorder.logs.filter { $0.contains("logind is not running") }.count == 1)
        #expect(recorder.events.isEmpty)
    }
}
}
