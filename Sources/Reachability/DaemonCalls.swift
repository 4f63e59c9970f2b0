import Foundation
import ReachabilityClient
import ReachabilityCore

/// Blocking one-shot varlink calls to reachd, for the code paths that must answer synchronously
/// (`startNotifier()`, `currentReachabilityStatus`) or already run on a private queue.
enum DaemonCalls {
    static let interface = "io.reachd.Reachability"

    /// One call on a fresh connection; client errors become `ReachabilityError` where the app
    /// can act on them (no daemon, unusable socket), others are rethrown as they are.
    static func call(_ member: String, parameters: [String: JSONValue] = [:], socketPath: String,
                     timeout: TimeInterval) throws -> VarlinkReply {
        do {
            let connection = try VarlinkConnection(socketPath: socketPath, timeout: timeout)
            defer { connection.close() }
            return try connection.call(VarlinkCall(method: "\(interface).\(member)", parameters: parameters))
        } catch ReachabilityClientError.daemonNotRunning(let path) {
            throw ReachabilityError.daemonNotRunning(socketPath: path)
        } catch ReachabilityClientError.connectionFailed(let path, let reason) {
            throw ReachabilityError.connectionFailed(socketPath: path, reason: reason.text)
        }
    }

    /// `GetStatus()`.
    static func status(socketPath: String, timeout: TimeInterval = 3) throws -> Status {
        try call("GetStatus", socketPath: socketPath, timeout: timeout).decode(Status.self, key: "status")
    }

    /// `Check(host:)`: the route to one destination, judged against the daemon's status.
    static func check(host: String, socketPath: String, timeout: TimeInterval = 15) throws -> HostCheck {
        try call("Check", parameters: ["host": .string(host)], socketPath: socketPath, timeout: timeout)
            .decode(HostCheck.self, key: "result")
    }

    /// `Probe()`: runs the connectivity check now.
    static func probe(socketPath: String, timeout: TimeInterval = 30) throws -> Probe {
        try call("Probe", socketPath: socketPath, timeout: timeout).decode(Probe.self, key: "probe")
    }
}
