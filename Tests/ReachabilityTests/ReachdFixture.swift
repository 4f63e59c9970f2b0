import Foundation
import Reachability
import ReachabilityClient
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A host namespace with an uplink namespace behind `eth0` (10.X.0.2 → gateway 10.X.0.1).
struct TestNetwork {
    let host: TestNamespace
    let uplinkNamespace: TestNamespace
    let uplink: VethUplink

    init(subnet: Int, inner: String = "eth0") throws {
        host = try TestNamespace(tag: "h")
        uplinkNamespace = try TestNamespace(tag: "u")
        uplink = try VethUplink(host: host, uplink: uplinkNamespace, inner: inner, subnet: subnet)
    }

    func destroy() {
        host.destroy()
        uplinkNamespace.destroy()
    }
}

/// What one delivery carried: the callback that ran and the status it read.
struct Delivery: Sendable, Equatable {
    var reachable: Bool
    var status: NetworkStatus
    var connection: Reachability.Connection
}

/// Wires a Reachability's callbacks and its notification into recorders.
final class Observed: @unchecked Sendable {
    let callbacks = Recorder<Delivery>()
    let notifications = Recorder<NetworkStatus>()
    private var token: NSObjectProtocol?

    init(_ reachability: Reachability) {
        reachability.whenReachable = { [callbacks] r in
            callbacks.append(Delivery(reachable: true, status: r.currentReachabilityStatus, connection: r.connection))
        }
        reachability.whenUnreachable = { [callbacks] r in
            callbacks.append(Delivery(reachable: false, status: r.currentReachabilityStatus, connection: r.connection))
        }
        token = NotificationCenter.default.addObserver(forName: .reachabilityChanged, object: reachability, queue: nil) { [notifications] note in
            guard let r = note.object as? Reachability else { return }
            notifications.append(r.currentReachabilityStatus)
        }
    }

    func stopObserving() {
        if let token { NotificationCenter.default.removeObserver(token) }
        token = nil
    }

    deinit { stopObserving() }
}

/// `values` without consecutive repeats.
func collapsed<T: Equatable>(_ values: [T]) -> [T] {
    values.reduce(into: []) { result, value in if result.last != value { result.append(value) } }
}
