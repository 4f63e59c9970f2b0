import Foundation
import Reachability
import ReachabilityClient
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

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
