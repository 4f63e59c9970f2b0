import Foundation
import Testing
@testable import Reachability
import TestSupport

extension SystemTests {
/// No daemon at all: the library runs the ReachabilityMonitor itself.
@Suite("Reachability without reachd")
struct ReachabilityInProcessTests {
    /// A socket path where nobody listens.
    static let noDaemon = "/tmp/reachd-api-no-daemon-\(getpid())/io.reachd.Reachability"

    @Test("source .daemon without a daemon: startNotifier() throws daemonNotRunning(socketPath:)")
    func daemonRequired() throws {
        let reachability = try Reachability(source: .daemon, socketPath: Self.noDaemon)
        #expect(throws: ReachabilityError.daemonNotRunning(socketPath: Self.noDaemon)) {
            try reachability.startNotifier()
        }
        #expect(!reachability.isNotifierRunning)
        #expect(reachability.socketPath == Self.noDaemon)
    }

    @Test("an empty host name is refused at init")
    func emptyHost() {
        #expect(throws: ReachabilityError.invalidHost(" ")) { try Reachability(hostname: " ") }
    }

    @Test("REACHD_SOCKET is not needed: an explicit socket path wins")
    func explicitSocket() throws {
        #expect(try Reachability(socketPath: "/x/y").socketPath == "/x/y")
        #expect(PathMonitor(socketPath: "/x/z").socketPath == "/x/z")
        #expect(NetworkDetector(socketPath: "/x/w").socketPath == "/x/w")
    }

    @Test("no daemon: the in-process monitor (in the test namespace) reports uplink changes", .needsRoot())
    func inProcessReportsChanges() async throws {
        let network = try TestNetwork(subnet: 91)
        defer { network.destroy() }

        let reachability = try Reachability(source: .auto, socketPath: Self.noDaemon)
        var configuration = reachability.inProcessConfiguration
        configuration.networkNamespace = network.host.name
        reachability.inProcessConfiguration = configuration
        reachability.inProcessServices = .none   // no ModemManager, no check to the outside
        let observed = Observed(reachability)
        try reachability.startNotifier()
        defer { reachability.stopNotifier() }

        #expect(await eventually { observed.callbacks.count == 1 })
        #expect(observed.callbacks.all.first == Delivery(reachable: true, status: .ethernet, connection: .ethernet))
        #expect(reachability.activeOrigin == .inProcess)

        try network.uplink.dropCarrier()
        #expect(await eventually { observed.callbacks.count == 2 })
        try network.uplink.restoreCarrier()
        #expect(await eventually { observed.callbacks.count == 3 })
        // A marker change: a duplicate of any change would be delivered before it.
        try network.uplink.dropCarrier()
        #expect(await eventually { observed.callbacks.all.last?.status == .notReachable && observed.notifications.all.last == .notReachable })
        #expect(observed.callbacks.all.map(\.status) == [.ethernet, .notReachable, .ethernet, .notReachable])
        #expect(observed.notifications.all == [.ethernet, .notReachable, .ethernet, .notReachable])
    }

    @Test("no daemon: a host target is judged by the in-process HostChecker (blackhole route)", .needsRoot())
    func inProcessHostTarget() async throws {
        let network = try TestNetwork(subnet: 96)
        defer { network.destroy() }
        try network.uplinkNamespace.ip("addr add 10.196.0.1/32 dev lo")

        let reachability = try Reachability(address: "10.196.0.1", source: .auto, socketPath: Self.noDaemon)
        var configuration = reachability.inProcessConfiguration
        configuration.networkNamespace = network.host.name
        reachability.inProcessConfiguration = configuration
        reachability.inProcessServices = .none   // no ModemManager, no check to the outside
        reachability.hostRecheckInterval = 0.3
        let observed = Observed(reachability)
        try reachability.startNotifier()
        defer { reachability.stopNotifier() }
        #expect(await eventually { observed.callbacks.count == 1 })
        #expect(observed.callbacks.all.first == Delivery(reachable: true, status: .ethernet, connection: .ethernet))
        #expect(reachability.hostCheck?.routes.first?.gateway == network.uplink.gatewayAddress)

        try network.host.ip("route add blackhole 10.196.0.1/32")
        #expect(await eventually { observed.callbacks.count == 2 })
        try network.host.ip("route del blackhole 10.196.0.1/32")
        #expect(await eventually { observed.callbacks.count == 3 })
        try network.host.ip("route add blackhole 10.196.0.1/32")
        #expect(await eventually { observed.callbacks.count >= 4 && observed.callbacks.all.last?.reachable == false })
        #expect(observed.callbacks.all.map(\.reachable) == [true, false, true, false])
    }

    @Test("no daemon: NetworkDetector runs the HTTP check in-process (full, portal)", .needsRoot())
    func inProcessDetector() async throws {
        let network = try TestNetwork(subnet: 97)
        defer { network.destroy() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try TestHTTPServer(in: network.uplinkNamespace, port: 8080, directory: directory)
        defer { server.stop() }

        let detector = NetworkDetector(source: .auto, socketPath: Self.noDaemon)
        var configuration = detector.inProcessConfiguration
        configuration.networkNamespace = network.host.name
        detector.inProcessConfiguration = configuration
        detector.inProcessServices = .none
        detector.inProcessServices.connectivity.enabled = true
        detector.inProcessServices.connectivity.url = "http://\(network.uplink.gatewayAddress):8080/generate_204"
        let full = await detector.check()
        #expect(full.isReachable && full.statusCode == 204 && full.connectivity == .full && full.error == nil)

        detector.inProcessServices.connectivity.url = "http://\(network.uplink.gatewayAddress):8080/portal"
        let portal = await detector.check()
        #expect(!portal.isReachable && portal.statusCode == 302 && portal.connectivity == .portal)
        #expect(portal.error == .captivePortal(portalURL: "http://portal.test/login"))

        try network.uplink.dropCarrier()
        let offline = await detector.check()
        #expect(!offline.isReachable && offline.connectivity == Connectivity.none && offline.error == .notReachable)
    }

    @Test("currentReachabilityStatus without a running notifier asks a short-lived monitor", .needsRoot())
    func oneShotStatus() throws {
        let network = try TestNetwork(subnet: 92)
        defer { network.destroy() }
        let reachability = try Reachability(source: .inProcess, socketPath: Self.noDaemon)
        var configuration = reachability.inProcessConfiguration
        configuration.networkNamespace = network.host.name
        reachability.inProcessConfiguration = configuration
        reachability.inProcessServices = .none   // no ModemManager, no check to the outside
        #expect(reachability.currentReachabilityStatus == .ethernet)
        try network.uplink.dropCarrier()
        #expect(reachability.currentReachabilityStatus == .notReachable)
    }

    @Test("a dropped Reachability is released with its notifier running, and calls nothing more", .needsRoot())
    func noRetainCycle() async throws {
        let network = try TestNetwork(subnet: 93)
        defer { network.destroy() }

        let callbacks = Recorder<NetworkStatus>()
        let weakReachability = WeakBox<Reachability>()
        // Held only by the callbacks: once it is gone, no callback exists that could be called.
        let weakSentinel = WeakBox<Sentinel>()
        do {
            let reachability = try Reachability(source: .inProcess, socketPath: Self.noDaemon)
            var configuration = reachability.inProcessConfiguration
            configuration.networkNamespace = network.host.name
            reachability.inProcessConfiguration = configuration
            let sentinel = Sentinel()
            weakSentinel.value = sentinel
            reachability.inProcessServices = .none
            reachability.whenReachable = { r in _ = sentinel; callbacks.append(r.currentReachabilityStatus) }
            reachability.whenUnreachable = { r in _ = sentinel; callbacks.append(r.currentReachabilityStatus) }
            try reachability.startNotifier()
            weakReachability.value = reachability
            #expect(await eventually { callbacks.count == 1 })
        }
        #expect(await eventually { weakReachability.value == nil })
        #expect(await eventually { weakSentinel.value == nil }, "the callbacks outlive the released Reachability")
        try network.uplink.dropCarrier()
        #expect(callbacks.all == [.ethernet])
    }

    @Test("stopNotifier() from inside a callback returns, and nothing follows", .needsRoot())
    func stopFromCallback() async throws {
        let network = try TestNetwork(subnet: 94)
        defer { network.destroy() }
        let reachability = try Reachability(source: .inProcess, socketPath: Self.noDaemon)
        var configuration = reachability.inProcessConfiguration
        configuration.networkNamespace = network.host.name
        reachability.inProcessConfiguration = configuration
        reachability.inProcessServices = .none   // no ModemManager, no check to the outside
        let callbacks = Recorder<NetworkStatus>()
        reachability.whenReachable = { r in
            callbacks.append(r.currentReachabilityStatus)
            r.stopNotifier()
        }
        reachability.whenUnreachable = { r in callbacks.append(r.currentReachabilityStatus) }
        try reachability.startNotifier()
        #expect(await eventually { callbacks.count == 1 })
        #expect(await eventually { !reachability.isNotifierRunning })
        try network.uplink.dropCarrier()
        // Restarted, the notifier first delivers the current state (offline), then the marker
        // change (online again, which stops it once more): a stray delivery of the change made
        // while stopped would come between.
        try reachability.startNotifier()
        #expect(await eventually { callbacks.count >= 2 })
        try network.uplink.restoreCarrier()
        #expect(await eventually { callbacks.count >= 3 && callbacks.all.last == .ethernet })
        #expect(callbacks.all == [.ethernet, .notReachable, .ethernet])
        #expect(await eventually { !reachability.isNotifierRunning })
    }

    @Test("callbacks run on the chosen callbackQueue", .needsRoot())
    func callbackQueue() async throws {
        let network = try TestNetwork(subnet: 95)
        defer { network.destroy() }
        let reachability = try Reachability(source: .inProcess, socketPath: Self.noDaemon)
        var configuration = reachability.inProcessConfiguration
        configuration.networkNamespace = network.host.name
        reachability.inProcessConfiguration = configuration
        reachability.inProcessServices = .none   // no ModemManager, no check to the outside
        let queue = DispatchQueue(label: "test.callbacks")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        reachability.callbackQueue = queue
        let onQueue = Recorder<Bool>()
        reachability.whenReachable = { _ in onQueue.append(DispatchQueue.getSpecific(key: key) == 7) }
        try reachability.startNotifier()
        defer { reachability.stopNotifier() }
        #expect(await eventually { onQueue.count == 1 })
        #expect(onQueue.all == [true])
    }
}
}

/// A weak reference the test can read from a polling closure.
final class WeakBox<Object: AnyObject>: @unchecked Sendable {
    private let lock = NSLock()
    private weak var object: Object?
    var value: Object? {
        get { lock.withLock { object } }
        set { lock.withLock { object = newValue } }
    }
}

/// An object whose lifetime a test watches through a `WeakBox`.
final class Sentinel: @unchecked Sendable {}
