import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem
import Synchronization

/// What a reconnecting subscription says about its connection, between events: a client that
/// shows events to people (`reachctl monitor`) says when reachd went away and came back, rather
/// than falling silent.
public enum ConnectionChange: Equatable, Sendable {
    /// The connection to reachd is gone (it stopped, restarted, or dropped this subscriber as too
    /// slow), with why; the subscription reconnects. Said once until `restored`.
    case lost(reason: String)
    /// reachd answers again; the events resume after `after`, the last sequence number delivered.
    case restored(after: Int?)
}

extension ReachabilityClient {
    /// Reachability events delivered to callbacks: first the current state (`initial`), then every change.
    ///
    /// The subscription reads on a thread of its own (blocking reads, never on Swift's cooperative
    /// pool, so an app that blocks its async threads still gets its events). When the daemon goes
    /// away (restart, upgrade) and `reconnect` is true, it reconnects with a short backoff and
    /// resumes with `Subscribe(after:)` from the last sequence number it delivered, so nothing is
    /// lost; an event is never delivered twice (a `resync` initial is, by design, a fresh start).
    /// A daemon that drops the subscriber as too slow (`SubscriberTooSlow`) is treated the same way.
    ///
    /// ```swift
    /// let subscription = ReachabilityClient().subscribe(
    ///     onEvent: { event in print(event.reason.code, event.current.status) },
    ///     onEnd: { error in print("subscription ended: \(error)") })
    /// …
    /// subscription.cancel()
    /// ```
    /// - Parameters:
    ///   - after: resume after this sequence number (as `reachctl monitor --after`).
    ///   - statusOnly: only changes of status, connectivity or primary interface.
    ///   - changes: only events whose `changes` name one of these `Status` fields (with
    ///     `statusOnly`, either); nil for every event.
    ///   - waitForDaemon: when false, the subscription ends with `daemonNotRunning` if no daemon
    ///     answers the first time; when true it waits for one.
    ///   - reconnect: when false, the subscription ends with the error when the connection drops
    ///     (or the daemon drops it as too slow); when true it reconnects and resumes.
    ///   - onEvent: called on the subscription's thread, in order, once per new event.
    ///   - onEnd: called once, on the subscription's thread, when the subscription ends by itself,
    ///     with the reason: `daemonNotRunning`, a dropped connection without `reconnect`, or a
    ///     varlink error reply (other than `SubscriberTooSlow` with `reconnect`) as `.remote`.
    ///     Never called for `cancel()`.
    ///   - onConnectionChange: with `reconnect`, called on the subscription's thread when an
    ///     established connection is lost and when reachd answers again (`ConnectionChange`).
    /// - Returns: the running subscription; keep it to `cancel()` it.
    public func subscribe(after: Int? = nil, statusOnly: Bool = false, changes: [String]? = nil,
                          waitForDaemon: Bool = false, reconnect: Bool = true,
                          onEvent: @escaping @Sendable (ReachabilityEvent) -> Void,
                          onEnd: @escaping @Sendable (any Error) -> Void,
                          onConnectionChange: (@Sendable (ConnectionChange) -> Void)? = nil) -> EventSubscription {
        let subscription = EventSubscription(socketPath: socketPath, after: after, statusOnly: statusOnly,
                                             changes: changes, waitForDaemon: waitForDaemon, reconnect: reconnect,
                                             onEvent: onEvent, onEnd: onEnd, onConnectionChange: onConnectionChange)
        subscription.start()
        return subscription
    }

    /// A running `Subscribe` call on a dedicated thread (see `ReachabilityClient.subscribe`).
    public final class EventSubscription: @unchecked Sendable {
        private let socketPath: String
        private let statusOnly: Bool
        private let changes: [String]?
        private let waitForDaemon: Bool
        private let reconnect: Bool
        private let onEvent: @Sendable (ReachabilityEvent) -> Void
        private let onEnd: @Sendable (any Error) -> Void
        private let onConnectionChange: (@Sendable (ConnectionChange) -> Void)?
        /// Cancelled, and the connection to shut down on `cancel()`.
        private let state = Mutex<(cancelled: Bool, connection: VarlinkConnection?)>((false, nil))
        private let wakeUp = DispatchSemaphore(value: 0)
        /// Only touched on the subscription's thread.
        private var deduplicator: EventDeduplicator

        init(socketPath: String, after: Int?, statusOnly: Bool, changes: [String]? = nil, waitForDaemon: Bool, reconnect: Bool,
             onEvent: @escaping @Sendable (ReachabilityEvent) -> Void, onEnd: @escaping @Sendable (any Error) -> Void,
             onConnectionChange: (@Sendable (ConnectionChange) -> Void)? = nil) {
            self.socketPath = socketPath; self.statusOnly = statusOnly; self.changes = changes
            self.onConnectionChange = onConnectionChange
            self.waitForDaemon = waitForDaemon
            self.reconnect = reconnect; self.onEvent = onEvent; self.onEnd = onEnd
            self.deduplicator = EventDeduplicator(lastSequence: after)
        }

        /// Starts the thread; called once, by `subscribe` or by `events()` after setting up its stream.
        /// No thread (`pthread_create` failing under `TasksMax=`) ends the subscription at once,
        /// so that no caller waits for events that cannot come.
        func start() {
            do {
                try DetachedThread.start(name: "reachd-sub") { [self] in run() }
            } catch {
                end(error)
            }
        }

        /// Ends the subscription: the thread stops soon (a blocked read is woken), and no `onEvent`
        /// or `onEnd` call starts after this returns — except one whose thread was already past
        /// its check when `cancel()` was called; a consumer that must not see it (a feed that
        /// switched sources) drops it itself. Safe from any thread, from the callbacks too, and
        /// more than once.
        public func cancel() {
            state.withLock { state in
                state.cancelled = true
                state.connection?.shutdown()
            }
            wakeUp.signal()
        }

        private var isCancelled: Bool { state.withLock { $0.cancelled } }

        /// Calls `onEnd` unless cancelled (without holding the lock: `onEnd` may call `cancel()`).
        private func end(_ error: any Error) {
            if !isCancelled { onEnd(error) }
        }

        private func run() {
            var everConnected = false
            var backoff: TimeInterval = 0.05
            /// The connection was lost and `.lost` said so: the next event first says `.restored`.
            var lostReported = false
            while !isCancelled {
                // Why this connection ended, when the loop goes on to reconnect.
                var lost: String?
                do {
                    let connection = try VarlinkConnection(socketPath: socketPath)
                    let proceed = state.withLock { state -> Bool in
                        guard !state.cancelled else { return false }
                        state.connection = connection
                        return true
                    }
                    guard proceed else { connection.close(); return }
                    defer { state.withLock { $0.connection = nil }; connection.close() }
                    everConnected = true
                    var parameters: [String: JSONValue] = [:]
                    if let after = deduplicator.lastSequence { parameters["after"] = .int(after) }
                    if statusOnly { parameters["statusOnly"] = .bool(true) }
                    if let changes { parameters["changes"] = .array(changes.map { .string($0) }) }
                    try connection.send(VarlinkCall(method: "\(Varlink.reachabilityInterface).Subscribe",
                                                    parameters: parameters, more: true))
                    while true {
                        let reply = try connection.receive()
                        if let error = reply.error {
                            let remote = VarlinkError(error, parameters: reply.parameters)
                            // Dropped for being slow: resume from the last event, the history has the rest.
                            if error == VarlinkError.subscriberTooSlow(dropped: 0).name && reconnect {
                                lost = "reachd dropped this subscriber as too slow"
                                break
                            }
                            end(ReachabilityClientError.remote(remote))
                            return
                        }
                        let event = try reply.decode(ReachabilityEvent.self, key: "event")
                        backoff = 0.05
                        if lostReported, !isCancelled {
                            lostReported = false
                            onConnectionChange?(.restored(after: deduplicator.lastSequence))
                        }
                        if deduplicator.admit(event), !isCancelled { onEvent(event) }
                    }
                } catch ReachabilityClientError.daemonNotRunning(let path) where !everConnected && !waitForDaemon {
                    end(ReachabilityClientError.daemonNotRunning(socketPath: path))
                    return
                } catch let error as ReachabilityClientError {
                    if isCancelled { return }
                    switch error {
                    case .daemonNotRunning, .connectionClosed, .timedOut:
                        if !reconnect && everConnected { end(error); return }
                    case .connectionFailed, .protocolError, .remote:
                        if !reconnect { end(error); return }
                    }
                    lost = error.description
                } catch {
                    if isCancelled { return }
                    if !reconnect { end(error); return }
                    lost = "\(error)"
                }
                if isCancelled { return }
                if everConnected, !lostReported, let lost {
                    lostReported = true
                    onConnectionChange?(.lost(reason: lost))
                }
                _ = wakeUp.wait(timeout: .now() + backoff)
                backoff = min(backoff * 2, 1.0)
            }
        }
    }
}
