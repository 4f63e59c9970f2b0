import Foundation
@testable import Reachability
import ReachabilityClient
import Testing
import TestSupport

extension SystemTests {
/// An app on the `Reachability` module, against a real reachd with the connectivity check on:
/// on reconnect it is never told "reachable, no internet" — the status that brings the path
/// back says `unknown` until the check answers.
@Suite(.serialized) struct ReconnectConnectivityTests {
    @Test("reconnect: whenReachable never sees connectivity none; NetworkDetector goes none → unknown → full",
          .enabled(if: getuid() == 0, "needs root: network namespaces"))
    func noFalseNoInternetOnReconnect() async throws {
        let network = try TestNetwork(subnet: 106)
        defer { network.destroy() }
        let server = try ProbeServer(in: network.uplinkNamespace, mode: .noContent)
        defer { server.stop() }
        let url = "http://\(network.uplink.gatewayAddress):8080/generate_204"
        let daemon = try DaemonUnderTest(namespace: network.host, config: "[Cellular]\nModemManager=no\n" + "[Connectivity]\nEnabled=yes\nURL=\(url)\nInterval=60\nTimeout=2\n")
        defer { daemon.stop() }
        #expect(await eventually(timeout: 15) { (try? ReachabilityClient(socketPath: daemon.socketPath, callTimeout: 3).statusBlocking().connectivity) == .full })

        // What each callback saw: reachable or not, and the connectivity of that same status.
        let seen = Recorder<String>()
        let reachability = try Reachability(source: .daemon, socketPath: daemon.socketPath)
        reachability.whenReachable = { r in seen.append("reachable/\(r.status?.connectivity.rawValue ?? "?")") }
        reachability.whenUnreachable = { r in seen.append("unreachable/\(r.status?.connectivity.rawValue ?? "?")") }
        try reachability.startNotifier()
        defer { reachability.stopNotifier() }
        let detector = NetworkDetector(socketPath: daemon.socketPath)
        var changes = detector.connectivityChanges.makeAsyncIterator()
        #expect(await changes.next() == .full)
        #expect(await eventually { seen.count == 1 })

        try network.uplink.dropCarrier()
        #expect(await changes.next() == Connectivity.none)
        try network.uplink.restoreCarrier()
        #expect(await changes.next() == .unknown)
        #expect(await changes.next() == .full)
        // The notifier has its own subscription: it gets the same full event in its own time.
        #expect(await eventually { reachability.status?.connectivity == .full })
        #expect(seen.all == ["reachable/full", "unreachable/none", "reachable/unknown"])
    }
}
}
