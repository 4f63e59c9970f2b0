import Foundation
import Testing
@testable import Reachability
import ReachabilityClient
import TestSupport

extension SystemTests {
/// The app API against a real reachd in a test namespace. Serialized: one daemon at a time keeps
/// the load (and the blocking waits for a daemon to start) off the other suites running in parallel.
@Suite("Reachability with reachd", .serialized)
struct ReachabilityDaemonTests {
    @Test("notifier: first callback is the current state, uplink down and up are delivered exactly once each", .needsRoot())
    func uplinkDownUp() async throws {
        let (network, daemon) = try TestNetwork.withDaemon(subnet: 81)
        defer { daemon.stop(); network.destroy() }

        let reachability = try Reachability(source: .daemon, socketPath: daemon.socketPath)
        let observed = Observed(reachability)
        try reachability.startNotifier()
        defer { reachability.stopNotifier() }

        #expect(await eventually { observed.callbacks.count == 1 })
        #expect(observed.callbacks.all.first == Delivery(reachable: true, status: .ethernet, connection: .ethernet))
        #expect(reachability.currentReachabilityStatus == .ethernet)
        #expect(reachability.connection == .ethernet)
        #expect(reachability.connection.description == "Ethernet")
        #expect(reachability.flags.contains(.reachable))

        try network.uplink.dropCarrier()
        #expect(await eventually { observed.callbacks.count == 2 })
        #expect(reachability.connection == .unavailable)
        #expect(reachability.connection.description == "No Connection")

        try network.uplink.restoreCarrier()
        #expect(await eventually { observed.callbacks.count == 3 })
        // Exactly once each: a marker change after the last one; a duplicate of any change would
        // arrive before the marker's delivery (one stream, one callback queue).
        try network.uplink.dropCarrier()
        #expect(await eventually { observed.callbacks.all.last?.reachable == false && observed.notifications.all.last == .notReachable })
        #expect(observed.callbacks.all == [
            Delivery(reachable: true, status: .ethernet, connection: .ethernet),
            Delivery(reachable: false, status: .notReachable, connection: .unavailable),
            Delivery(reachable: true, status: .ethernet, connection: .ethernet),
            Delivery(reachable: false, status: .notReachable, connection: .unavailable),
        ])
        #expect(observed.notifications.all == [.ethernet, .notReachable, .ethernet, .notReachable])

        // Nothing after stopNotifier() returns: the daemon sees the subscription end (closes its
        // connection), so the change after it cannot be delivered.
        reachability.stopNotifier()
        #expect(await eventually { daemon.openConnections == 0 }, "the daemon still holds the stopped notifier's connection")
        try network.uplink.restoreCarrier()
        #expect(await eventually { (try? ReachabilityClient(socketPath: daemon.socketPath, callTimeout: 3).statusBlocking().status) == .ethernet })

        // A restarted notifier starts with the current state again, then a marker change: in
        // between, nothing else (no stray delivery of the change made while stopped).
        try reachability.startNotifier()
        #expect(await eventually { observed.callbacks.count >= 5 })
        #expect(observed.callbacks.all.last == Delivery(reachable: true, status: .ethernet, connection: .ethernet))
        try network.uplink.dropCarrier()
        #expect(await eventually { observed.callbacks.count >= 6 && observed.callbacks.all.last?.reachable == false })
        #expect(observed.callbacks.all.map(\.status) == [.ethernet, .notReachable, .ethernet, .notReachable, .ethernet, .notReachable])
    }

    @Test("Wi-Fi and cellular through reachd's kind overrides ([Interfaces] Kind.eth*=…)", .needsRoot(),
          arguments: [("wifi", NetworkStatus.wifi, Reachability.Connection.wifi),
                      ("wwan", NetworkStatus.wwan, Reachability.Connection.cellular)])
    func kindOverrides(kind: String, status: NetworkStatus, connection: Reachability.Connection) async throws {
        let (network, daemon) = try TestNetwork.withDaemon(subnet: 82,
                                                           config: DaemonUnderTest.defaultConfig + "[Interfaces]\nKind.eth*=\(kind)\n")
        defer { daemon.stop(); network.destroy() }

        let reachability = try Reachability(source: .daemon, socketPath: daemon.socketPath)
        let observed = Observed(reachability)
        try reachability.startNotifier()
        defer { reachability.stopNotifier() }
        #expect(await eventually { observed.callbacks.count == 1 })
        #expect(observed.callbacks.all.first == Delivery(reachable: true, status: status, connection: connection))
        #expect(reachability.isReachableViaWiFi == (connection == .wifi))
        #expect(reachability.isReachableViaWWAN == (connection == .cellular))
        #expect(reachability.status?.expensive == (connection == .cellular))

        // Reachability.swift's option: cellular does not count.
        reachability.allowsCellularConnection = false
        #expect(reachability.isReachable == (connection != .cellular))
    }

    @Test("a host target reacts to a blackhole route to it (no status change of the machine)", .needsRoot())
    func hostTargetBlackhole() async throws {
        let (network, daemon) = try TestNetwork.withDaemon(subnet: 83)
        defer { daemon.stop(); network.destroy() }
        // The target lives in the uplink namespace, behind the default route.
        try network.uplinkNamespace.ip("addr add 10.183.0.1/32 dev lo")

        let reachability = try Reachability(address: "10.183.0.1", source: .daemon, socketPath: daemon.socketPath)
        reachability.hostRecheckInterval = 0.3
        let observed = Observed(reachability)
        try reachability.startNotifier()
        defer { reachability.stopNotifier() }
        #expect(await eventually { observed.callbacks.count == 1 })
        #expect(observed.callbacks.all.first?.status == .ethernet)
        #expect(reachability.hostCheck?.routes.first?.gateway == network.uplink.gatewayAddress)

        try network.host.ip("route add blackhole 10.183.0.1/32")
        #expect(await eventually { observed.callbacks.count == 2 })
        #expect(observed.callbacks.all.last == Delivery(reachable: false, status: .notReachable, connection: .unavailable))

        try network.host.ip("route del blackhole 10.183.0.1/32")
        #expect(await eventually { observed.callbacks.count == 3 })
        // A marker change: between it and the last one, nothing (no duplicate).
        try network.host.ip("route add blackhole 10.183.0.1/32")
        #expect(await eventually { observed.callbacks.all.last?.reachable == false && observed.notifications.all.last == .notReachable })
        #expect(observed.callbacks.all.map(\.reachable) == [true, false, true, false])
        #expect(observed.notifications.all == [.ethernet, .notReachable, .ethernet, .notReachable])
    }

    @Test("PathMonitor.paths yields the current path, then each change, never the same path twice", .needsRoot())
    func pathMonitorPaths() async throws {
        let (network, daemon) = try TestNetwork.withDaemon(subnet: 84)
        defer { daemon.stop(); network.destroy() }

        // A path update is any change of the path: besides the carrier changes the test makes, the
        // kernel may finish IPv6 link-local set-up in between (a new address, a new path).
        let paths = Recorder<Path>()
        let stream = PathMonitor(source: .daemon, socketPath: daemon.socketPath).paths
        let consumer = Task { for await path in stream { paths.append(path) } }
        defer { consumer.cancel() }

        #expect(await eventually { paths.count >= 1 })
        let first = try #require(paths.all.first)
        #expect(first.status == .satisfied)
        #expect(first.usesInterfaceType(.wiredEthernet))
        #expect(!first.usesInterfaceType(.wifi))
        #expect(first.availableInterfaces.map(\.name) == ["eth0"])
        #expect(first.gateways == [network.uplink.gatewayAddress])
        #expect(first.supportsIPv4 && !first.isExpensive)
        #expect(first.networkStatus == .ethernet)

        try network.uplink.dropCarrier()
        #expect(await eventually { paths.all.last?.status == .unsatisfied })
        let down = try #require(paths.all.last)
        #expect(!down.usesInterfaceType(.wiredEthernet))
        #expect(down.availableInterfaces.isEmpty)

        try network.uplink.restoreCarrier()
        #expect(await eventually { paths.all.last?.status == .satisfied })
        let all = paths.all
        #expect(zip(all, all.dropFirst()).allSatisfy { $0 != $1 })
        #expect(collapsed(all.map(\.status)) == [.satisfied, .unsatisfied, .satisfied])
    }

    @Test("PathMonitor.start(queue:) calls pathUpdateHandler on the queue; cancel() stops it", .needsRoot())
    func pathMonitorHandler() async throws {
        let (network, daemon) = try TestNetwork.withDaemon(subnet: 85)
        defer { daemon.stop(); network.destroy() }

        let monitor = PathMonitor(source: .daemon, socketPath: daemon.socketPath)
        let paths = Recorder<Path.Status>()
        let queue = DispatchQueue(label: "test.paths")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 1)
        let onQueue = Recorder<Bool>()
        monitor.pathUpdateHandler = { path in
            onQueue.append(DispatchQueue.getSpecific(key: key) == 1)
            paths.append(path.status)
        }
        monitor.start(queue: queue)
        #expect(await eventually { paths.count >= 1 })
        #expect(paths.all.first == .satisfied)
        #expect(monitor.currentPath.status == .satisfied)
        try network.uplink.dropCarrier()
        #expect(await eventually { paths.all.last == .unsatisfied })
        #expect(monitor.currentPath.status == .unsatisfied)
        monitor.cancel()
        let atCancel = paths.count
        // The daemon closes the cancelled monitor's connection: the change after it cannot arrive.
        #expect(await eventually { daemon.openConnections == 0 }, "the daemon still holds the cancelled monitor's connection")
        try network.uplink.restoreCarrier()
        #expect(await eventually { (try? ReachabilityClient(socketPath: daemon.socketPath, callTimeout: 3).statusBlocking().reachable) == true })
        #expect(paths.count == atCancel)
        #expect(collapsed(paths.all) == [.satisfied, .unsatisfied])
        #expect(onQueue.all.allSatisfy { $0 })
    }

    @Test("a dropped Reachability on the daemon is released with its notifier running", .needsRoot())
    func releasedWithDaemon() async throws {
        let (network, daemon) = try TestNetwork.withDaemon(subnet: 88)
        defer { daemon.stop(); network.destroy() }

        let callbacks = Recorder<NetworkStatus>()
        let weakReachability = WeakBox<Reachability>()
        do {
            let reachability = try Reachability(source: .daemon, socketPath: daemon.socketPath)
            reachability.whenReachable = { r in callbacks.append(r.currentReachabilityStatus) }
            reachability.whenUnreachable = { r in callbacks.append(r.currentReachabilityStatus) }
            try reachability.startNotifier()
            weakReachability.value = reachability
            #expect(await eventually { callbacks.count == 1 })
        }
        #expect(await eventually { weakReachability.value == nil })
        // Its subscription went with it: the daemon closed the connection, so the change after
        // it reaches nobody.
        #expect(await eventually { daemon.openConnections == 0 }, "the daemon still holds the released notifier's connection")
        try network.uplink.dropCarrier()
        #expect(await eventually { (try? ReachabilityClient(socketPath: daemon.socketPath, callTimeout: 3).statusBlocking().status) == .notReachable })
        #expect(callbacks.all == [.ethernet])
    }

    @Test("daemon stopped and restarted under a running notifier: no crash, callbacks resume", .needsRoot())
    func daemonRestart() async throws {
        let (network, daemon) = try TestNetwork.withDaemon(subnet: 86)
        defer { daemon.stop(); network.destroy() }

        let reachability = try Reachability(source: .daemon, socketPath: daemon.socketPath)
        let observed = Observed(reachability)
        try reachability.startNotifier()
        defer { reachability.stopNotifier() }
        #expect(await eventually { observed.callbacks.count == 1 })

        daemon.stop()
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
        try daemon.start()
        try network.uplink.dropCarrier()
        #expect(await eventually { observed.callbacks.count == 2 })
        #expect(observed.callbacks.all.last?.status == .notReachable)

        // A change while the daemon is away arrives once it is back.
        daemon.stop()
        try network.uplink.restoreCarrier()
        try daemon.start()
        #expect(await eventually { observed.callbacks.count == 3 })
        // A marker change: nothing between it and the last one.
        try network.uplink.dropCarrier()
        #expect(await eventually { observed.callbacks.count >= 4 && observed.callbacks.all.last?.status == .notReachable })
        #expect(observed.callbacks.all.map(\.status) == [.ethernet, .notReachable, .ethernet, .notReachable])
    }

    @Test(".auto starts in-process without a daemon and switches to the daemon when it appears", .needsRoot())
    func autoSwitchesToDaemon() async throws {
        let network = try TestNetwork(subnet: 87)
        defer { network.destroy() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let socketPath = directory.path + "/io.reachd.Reachability"

        let reachability = try Reachability(source: .auto, socketPath: socketPath)
        var configuration = reachability.inProcessConfiguration
        configuration.networkNamespace = network.host.name
        reachability.inProcessConfiguration = configuration
        reachability.inProcessServices = .none   // no ModemManager, no check to the outside
        let observed = Observed(reachability)
        try reachability.startNotifier()
        defer { reachability.stopNotifier() }
        #expect(await eventually { observed.callbacks.count == 1 })
        #expect(reachability.activeOrigin == .inProcess)
        #expect(reachability.currentReachabilityStatus == .ethernet)

        let daemon = try DaemonUnderTest(namespace: network.host, directory: directory.path)
        defer { daemon.stop() }
        #expect(await eventually { reachability.activeOrigin == .daemon })
        // Same state from the other source: no callback. The next change is the marker: the
        // only delivery after the first.
        try network.uplink.dropCarrier()
        #expect(await eventually { observed.callbacks.all.last?.status == .notReachable })
        #expect(observed.callbacks.all.map(\.status) == [.ethernet, .notReachable])

        // The daemon goes away: back to in-process, still watching.
        daemon.stop()
        #expect(await eventually { reachability.activeOrigin == .inProcess })
        try network.uplink.restoreCarrier()
        #expect(await eventually { observed.callbacks.count == 3 })
        try network.uplink.dropCarrier()
        #expect(await eventually { observed.callbacks.count >= 4 && observed.callbacks.all.last?.status == .notReachable })
        #expect(observed.callbacks.all.map(\.status) == [.ethernet, .notReachable, .ethernet, .notReachable])
    }
}
}
