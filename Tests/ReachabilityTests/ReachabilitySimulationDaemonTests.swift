import Foundation
import Testing
@testable import Reachability
import ReachabilityClient
import ReachabilityCore
import TestSupport

extension SystemTests {
/// The app API against a real reachd that plays a simulation (`Simulate`): the callbacks, the
/// paths and the connectivity stream see the simulated network and then the real one again.
@Suite("Reachability with a simulating reachd", .serialized)
struct ReachabilitySimulationDaemonTests {
    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"))
    func callbacksAndPathsSeeTheSimulation() throws {
        let (network, daemon) = try TestNetwork.withDaemon(subnet: 86)
        defer { daemon.stop(); network.destroy() }
        #expect(waitUntil(timeout: 15) { (try? ReachabilityClient(socketPath: daemon.socketPath, callTimeout: 3).statusBlocking().status) == .ethernet })

        let reachability = try Reachability(source: .daemon, socketPath: daemon.socketPath)
        let observed = Observed(reachability)
        try reachability.startNotifier()
        defer { reachability.stopNotifier() }
        let monitor = PathMonitor(source: .daemon, socketPath: daemon.socketPath)
        let paths = Recorder<Path>()
        monitor.pathUpdateHandler = { paths.append($0) }
        monitor.start(queue: DispatchQueue(label: "test.simulation.paths"))
        defer { monitor.cancel() }
        // A host target: reachd's route look-up, until a simulation answers for every host.
        let gateway = try Reachability(address: network.uplink.gatewayAddress, source: .daemon, socketPath: daemon.socketPath)
        gateway.hostRecheckInterval = 0
        let gatewayObserved = Observed(gateway)
        try gateway.startNotifier()
        defer { gateway.stopNotifier() }
        #expect(waitUntil(timeout: 15) { observed.callbacks.count == 1 && paths.count == 1 && gatewayObserved.callbacks.count == 1 })
        #expect(gatewayObserved.callbacks.all.first?.status == .ethernet)

        // Blocking calls and waits: this test holds its thread instead of waiting for the
        // cooperative pool, which other suites' blocking waits can fill when run in parallel.
        let connection = try VarlinkConnection(socketPath: daemon.socketPath, timeout: 10)
        defer { connection.close() }
        let reply = try connection.call(VarlinkCall(method: "io.reachd.Reachability.Simulate",
                                                    parameters: ["status": .string("wwan2G"), "connectivity": .string("portal"), "seconds": .int(600)]))
        #expect(try reply.decode(Status.self, key: "status").simulated)
        #expect(waitUntil(timeout: 15) { observed.callbacks.count == 2 && paths.count == 2 })
        #expect(observed.callbacks.all.last == Delivery(reachable: true, status: .wwan2G, connection: .cellular))
        #expect(reachability.status?.simulated == true)
        #expect(waitUntil(timeout: 15) { gatewayObserved.callbacks.count == 2 })
        #expect(gatewayObserved.callbacks.all.last == Delivery(reachable: true, status: .wwan2G, connection: .cellular))
        let path = try #require(paths.all.last)
        #expect(path.usesInterfaceType(.cellular) && path.isExpensive && path.connectivity == .portal)

        _ = try connection.call(VarlinkCall(method: "io.reachd.Reachability.Simulate", parameters: ["reset": .bool(true)]))
        #expect(waitUntil(timeout: 15) { observed.callbacks.count == 3 && paths.count == 3 })
        #expect(observed.callbacks.all.last == Delivery(reachable: true, status: .ethernet, connection: .ethernet))
        #expect(reachability.status?.simulated == false)
        #expect(observed.notifications.all == [.ethernet, .wwan2G, .ethernet])
        #expect(waitUntil(timeout: 15) { gatewayObserved.callbacks.count == 3 })
        #expect(gatewayObserved.callbacks.all.last == Delivery(reachable: true, status: .ethernet, connection: .ethernet))
    }
}
}
