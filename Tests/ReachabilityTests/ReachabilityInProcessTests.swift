import Foundation
import Testing
@testable import Reachability
import TestSupport

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

    @Test("no daemon: the in-process monitor (in the test namespace) reports uplink changes")
    func inProcessReportsChanges() async throws {
        guard isRoot else { print(rootSkipMessage); return }
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
        await settle()
        #expect(observed.callbacks.all.map(\.status) == [.ethernet, .notReachable, .ethernet])
        #expect(observed.notifications.all == [.ethernet, .notReachable, .ethernet])
    }

    @Test("no daemon: a host target is judged by the in-process HostChecker (blackhole route)")
    func inProcessHostTarget() async throws {
        guard isRoot else { print(rootSkipMessage); return }
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
        await settle()
        #expect(observed.callbacks.all.map(\.reachable) == [true, false, true])
    }

    @Test("no daemon: NetworkDetector runs the HTTP check in-process (full, portal)")
    func inProcessDetector() async throws {
        guard isRoot else { print(rootSkipMessage); return }
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

    @Test("currentReachabilityStatus without a running notifier asks a short-lived monitor")
    func oneShotStatus() throws {
        guard isRoot else { print(rootSkipMessage); return }
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

    @Test("a dropped Reachability is released with its notifier running, and calls nothing more")
    func noRetainCycle() async throws {
        guard isRoot else { print(rootSkipMessage); return }
        let network = try TestNetwork(subnet: 93)
        defer { network.destroy() }

        let callbacks = Recorder<NetworkStatus>()
        let weakReachability = WeakBox<Reachability>()
        do {
            let reachability = try Reachability(source: .inProcess, socketPath: Self.noDaemon)
            var configuration = reachability.inProcessConfiguration
            configuration.networkNamespace = network.host.name
            reachability.inProcessConfiguration = configuration
            reachability.inProcessServices = .none
            reachability.whenReachable = { r in callbacks.append(r.currentReachabilityStatus) }
            reachability.whenUnreachable = { r in callbacks.append(r.currentReachabilityStatus) }
            try reachability.startNotifier()
            weakReachability.value = reachability
            #expect(await eventually { callbacks.count == 1 })
        }
        #expect(await eventually { weakReachability.value == nil })
        try network.uplink.dropCarrier()
        await settle()
        #expect(callbacks.all == [.ethernet])
    }

    @Test("stopNotifier() from inside a callback returns, and nothing follows")
    func stopFromCallback() async throws {
        guard isRoot else { print(rootSkipMessage); return }
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
        await settle()
        #expect(callbacks.all == [.ethernet])
    }

    @Test("callbacks run on the chosen callbackQueue")
    func callbackQueue() async throws {
        guard isRoot else { print(rootSkipMessage); return }
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

/// A weak reference the test can read from a polling closure.
final class WeakBox<Object: AnyObject>: @unchecked Sendable {
    private let lock = NSLock()
    private weak var object: Object?
    var value: Object? {
        get { lock.withLock { object } }
        set { lock.withLock { object = newValue } }
    }
}
