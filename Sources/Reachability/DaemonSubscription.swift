import Foundation
import ReachabilityClient
import ReachabilityCore

/// reachd's `Subscribe` on a thread of its own.
///
/// The library does not read the daemon's events on Swift's cooperative thread pool (as
/// `ReachabilityClient.events()` consumers would): an app that blocks its async threads must
/// still get its reachability callbacks. With `reconnect`, a lost connection is retried with a
/// short backoff and resumed with `Subscribe(after:)` from the last sequence number, so no
/// change is lost or repeated across a daemon restart; without it, `onEnd` is called.
final class DaemonSubscription: @unchecked Sendable {
    private let socketPath: String
    private let reconnect: Bool
    private let onEvent: @Sendable (ReachabilityEvent) -> Void
    private let onEnd: @Sendable () -> Void
    private let lock = NSLock()
    private var cancelled = false
    private var connection: VarlinkConnection?
    private let wakeUp = DispatchSemaphore(value: 0)

    init(socketPath: String, reconnect: Bool,
         onEvent: @escaping @Sendable (ReachabilityEvent) -> Void, onEnd: @escaping @Sendable () -> Void) {
        self.socketPath = socketPath; self.reconnect = reconnect; self.onEvent = onEvent; self.onEnd = onEnd
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "reachd.reachability.subscription"
        thread.start()
    }

    /// Makes the thread end soon; no `onEvent` or `onEnd` call starts after this returns...
    /// except one already past its check, which the feed's epoch drops.
    func cancel() {
        lock.withLock {
            cancelled = true
            connection?.shutdown()
        }
        wakeUp.signal()
    }

    private var isCancelled: Bool { lock.withLock { cancelled } }

    private func run() {
        var deduplicator = EventDeduplicator()
        var backoff: TimeInterval = 0.05
        while !isCancelled {
            do {
                let connection = try VarlinkConnection(socketPath: socketPath)
                let proceed = lock.withLock { () -> Bool in
                    guard !cancelled else { return false }
                    self.connection = connection
                    return true
                }
                guard proceed else { connection.close(); return }
                defer { lock.withLock { self.connection = nil }; connection.close() }
                var parameters: [String: JSONValue] = [:]
                if let after = deduplicator.lastSequence { parameters["after"] = .int(after) }
                try connection.send(VarlinkCall(method: "\(DaemonCalls.interface).Subscribe", parameters: parameters, more: true))
                while true {
                    let reply = try connection.receive()
                    if let error = reply.error { throw VarlinkError(error, parameters: reply.parameters) }
                    let event = try reply.decode(ReachabilityEvent.self, key: "event")
                    backoff = 0.05
                    if deduplicator.admit(event), !isCancelled { onEvent(event) }
                }
            } catch {
                if isCancelled { return }
                if !reconnect { onEnd(); return }
            }
            _ = wakeUp.wait(timeout: .now() + backoff)
            backoff = min(backoff * 2, 1.0)
        }
    }
}
