import FoundationEssentials
import ReachabilityCore
import ReachabilityLinux
import ReachabilityServer
import Testing
@testable import reachd

/// The daemon's rooms read the time from the clock they are handed: the simulation's events
/// and the metrics' start carry its wall time, not the machine's.
@Suite struct DaemonClockTests {
    private static let monitorClock = ReachdClock { ClockReading(wall: Date(timeIntervalSince1970: 1_500_000_000), uptime: 7) }
    private static let wall = Date(timeIntervalSince1970: 1_000_000_000)
    private static let clock = ReachdClock { ClockReading(wall: wall, uptime: 42) }

    @Test func theSimulationTimesItsEventsByItsClock() {
        let monitor = ReachabilityMonitor(configuration: .init(), clock: Self.monitorClock)
        let controller = monitor.queue.sync { SimulationController(monitor: monitor, clock: Self.clock) }
        let initial = monitor.queue.sync { controller.initialEvent() }
        #expect(initial.timestamp == Self.wall)
        #expect(initial.event == .initial)
    }

    @Test func theMetricsStartAtTheClocksTime() throws {
        let monitor = ReachabilityMonitor(configuration: .init(), clock: Self.monitorClock)
        let initial = monitor.initialEvent()
        let server = ReachabilityServer(initial: initial, clock: Self.clock)
        let metrics = MetricsCollector(initial: initial, monitor: monitor, server: server, log: .discarding, clock: Self.clock)
        let text = metrics.queue.sync { metrics.render() }
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("reachd_last_change_timestamp_seconds ") })
        #expect(Double(line.split(separator: " ").last ?? "") == Self.wall.timeIntervalSince1970, "\(line)")
    }
}
