import Dispatch
import Foundation
import Reachability
import Testing

/// Collects what callbacks deliver, from any thread.
private final class SimRecorder<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [T] = []
    func append(_ item: T) { lock.withLock { items.append(item) } }
    var all: [T] { lock.withLock { items } }

    /// Waits (polling) until `count` items arrived.
    func wait(for count: Int, timeout: TimeInterval = 5) -> [T] {
        let deadline = Date().addingTimeInterval(timeout)
        while all.count < count && Date() < deadline { usleep(2_000) }
        return all
    }
}

/// The test source an app's own unit tests use: plain tests, no daemon, no root.
@Suite struct SimulatedNetworkTests {
    @Test func drivesReachabilityCallbacksAndNotifications() throws {
        let network = SimulatedNetwork(.wifi)
        let reachability = try Reachability(source: .simulated(network))
        let center = NotificationCenter()
        reachability.notificationCenter = center
        let calls = SimRecorder<String>()
        reachability.whenReachable = { r in calls.append("reachable \(r.currentReachabilityStatus.rawValue) \(r.connection)") }
        reachability.whenUnreachable = { r in calls.append("unreachable \(r.currentReachabilityStatus.rawValue)") }
        let notes = SimRecorder<NetworkStatus>()
        let token = center.addObserver(forName: .reachabilityChanged, object: reachability, queue: nil) { note in
            if let r = note.object as? Reachability { notes.append(r.currentReachabilityStatus) }
        }
        defer { center.removeObserver(token) }
        try reachability.startNotifier()
        defer { reachability.stopNotifier() }
        #expect(calls.wait(for: 1) == ["reachable wifi WiFi"])

        network.set(.notReachable)
        #expect(calls.wait(for: 2).last == "unreachable notReachable")
        network.set(.wwan2G, connectivity: .portal)
        #expect(calls.wait(for: 3).last == "reachable wwan2G Cellular")
        // The same status again is no change: nothing is delivered.
        network.set(.wwan2G, connectivity: .portal)
        network.set(.ethernet)
        let all = calls.wait(for: 4)
        #expect(all == ["reachable wifi WiFi", "unreachable notReachable", "reachable wwan2G Cellular", "reachable ethernet Ethernet"])
        #expect(notes.wait(for: 4) == [.wifi, .notReachable, .wwan2G, .ethernet])
        #expect(reachability.status?.simulated == true)
        #expect(reachability.isReachableViaEthernet)
    }

    @Test func stopNotifierStopsDelivery() throws {
        let network = SimulatedNetwork(.ethernet)
        let reachability = try Reachability(source: .simulated(network))
        let calls = SimRecorder<NetworkStatus>()
        reachability.whenReachable = { calls.append($0.currentReachabilityStatus) }
        reachability.whenUnreachable = { calls.append($0.currentReachabilityStatus) }
        try reachability.startNotifier()
        #expect(calls.wait(for: 1) == [.ethernet])
        reachability.stopNotifier()
        network.set(.notReachable)
        network.set(.wifi)
        // Deliveries are asynchronous; a fresh notifier sees the current state, the stopped one nothing.
        let probe = try Reachability(source: .simulated(network))
        let fresh = SimRecorder<NetworkStatus>()
        probe.whenReachable = { fresh.append($0.currentReachabilityStatus) }
        try probe.startNotifier()
        #expect(fresh.wait(for: 1) == [.wifi])
        probe.stopNotifier()
        #expect(calls.all == [.ethernet])
    }

    @Test func drivesPathMonitor() async throws {
        let network = SimulatedNetwork(.wifi)
        let monitor = PathMonitor(source: .simulated(network))
        let paths = SimRecorder<Path>()
        monitor.pathUpdateHandler = { paths.append($0) }
        monitor.start(queue: DispatchQueue(label: "test.paths"))
        defer { monitor.cancel() }
        let first = try #require(paths.wait(for: 1).first)
        #expect(first.status == .satisfied && first.usesInterfaceType(.wifi) && !first.isExpensive)
        network.set(.wwan4G)
        let cellular = try #require(paths.wait(for: 2).last)
        #expect(cellular.usesInterfaceType(.cellular) && cellular.isExpensive && cellular.cellular?.accessTechnology == "lte")
        network.set(.notReachable)
        #expect(paths.wait(for: 3).last?.status == .unsatisfied)

        // The async form as well.
        let stream = PathMonitor(source: .simulated(network)).paths
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next()?.status == .unsatisfied)
        network.set(.ethernet, connectivity: .limited)
        let next = await iterator.next()
        #expect(next?.status == .satisfied && next?.connectivity == .limited)
    }

    @Test func drivesNetworkDetector() async throws {
        let network = SimulatedNetwork(.wifi)
        let detector = NetworkDetector(source: .simulated(network))
        let full = await detector.check()
        #expect(full.isReachable && full.connectivity == .full && full.statusCode == 204)
        network.set(connectivity: .portal)
        let portal = await detector.check()
        #expect(!portal.isReachable && portal.connectivity == .portal)
        #expect(portal.error == .captivePortal(portalURL: "http://portal.invalid/login"))
        network.set(.notReachable)
        #expect(await detector.check().error == .notReachable)
        // A probe result set by hand wins.
        network.setProbeResult(NetworkDetector.Result(isReachable: false, statusCode: 503, error: .probeFailed("HTTP 503"),
                                                      connectivity: .limited, probe: nil))
        let forced = await detector.check()
        #expect(forced.statusCode == 503 && forced.connectivity == .limited)
        let callback = SimRecorder<Int?>()
        detector.checkNetworkReachability { _, statusCode, _ in callback.append(statusCode) }
        #expect(callback.wait(for: 1) == [503])

        var changes = NetworkDetector(source: .simulated(network)).connectivityChanges.makeAsyncIterator()
        #expect(await changes.next() == Connectivity.none)
        network.set(.wifi, connectivity: .limited)
        #expect(await changes.next() == .limited)
    }

    @Test func hostTargetFollowsTheNetwork() throws {
        let network = SimulatedNetwork(.wifi)
        let reachability = try Reachability(hostname: "example.com", source: .simulated(network))
        let calls = SimRecorder<NetworkStatus>()
        reachability.whenReachable = { calls.append($0.currentReachabilityStatus) }
        reachability.whenUnreachable = { calls.append($0.currentReachabilityStatus) }
        try reachability.startNotifier()
        defer { reachability.stopNotifier() }
        #expect(calls.wait(for: 1) == [.wifi])
        network.set(.notReachable)
        #expect(calls.wait(for: 2) == [.wifi, .notReachable])
    }

    @Test func statusesAreWhatReachdWouldPublish() {
        let network = SimulatedNetwork(.wwan3G)
        #expect(network.status.cellular?.generation == "3G" && network.status.expensive && network.status.simulated)
        for status in NetworkStatus.allCases {
            network.set(status)
            #expect(network.status.status == status)
            #expect(network.status.isConsistent)
        }
        network.update { $0.expensive = true; $0.primary?.metered = true }
        #expect(network.status.expensive && network.status.primary?.metered == true)
    }
}
