import Dispatch
import FoundationEssentials
import ReachabilityCore

/// A client of reachd's varlink API (`io.reachd.Reachability`).
///
/// ```swift
/// let client = ReachabilityClient()              // REACHD_SOCKET or the default paths
/// let status = try await client.status()
/// for try await event in client.events() { print(event.reason.code, event.current.status) }
/// ```
public struct ReachabilityClient: Sendable {
    public let socketPath: String
    /// Timeout of one-shot calls.
    public var callTimeout: TimeInterval

    /// - Parameter socketPath: nil resolves as `ReachabilitySocketPath.resolve` does.
    public init(socketPath: String? = nil, callTimeout: TimeInterval = 30) {
        self.socketPath = ReachabilitySocketPath.resolve(explicit: socketPath)
        self.callTimeout = callTimeout
    }

    /// The daemon's current status (`GetStatus`).
    public func status() async throws -> Status {
        try await call(method: "\(Varlink.reachabilityInterface).GetStatus").decode(Status.self, key: "status")
    }

    /// Any single-reply method: `call(method: "io.reachd.Reachability.Check", parameters: ["host": .string("example.com")])`.
    /// Throws `.remote` for a varlink error reply.
    public func call(method: String, parameters: [String: JSONValue] = [:]) async throws -> VarlinkReply {
        try await withCheckedThrowingContinuation { continuation in
            // connect(2) and read(2) block: not on the cooperative pool.
            DispatchQueue.global().async {
                continuation.resume(with: Result { try callBlocking(method: method, parameters: parameters) })
            }
        }
    }

    /// `call(method:parameters:)` on the calling thread, for code that must answer synchronously
    /// (the app API's `currentReachabilityStatus`) or already runs on a thread of its own.
    public func callBlocking(method: String, parameters: [String: JSONValue] = [:]) throws -> VarlinkReply {
        let connection = try VarlinkConnection(socketPath: socketPath, timeout: callTimeout)
        defer { connection.close() }
        return try connection.call(VarlinkCall(method: method, parameters: parameters))
    }

    /// `status()` on the calling thread.
    public func statusBlocking() throws -> Status {
        try callBlocking(method: "\(Varlink.reachabilityInterface).GetStatus").decode(Status.self, key: "status")
    }

    /// `Probe()` on the calling thread: runs the connectivity check now and returns its verdict.
    /// Throws `.remote` with `io.reachd.Reachability.ProbeDisabled` when the check is off.
    public func probeBlocking() throws -> Probe {
        try callBlocking(method: "\(Varlink.reachabilityInterface).Probe").decode(Probe.self, key: "probe")
    }

    /// Reachability events: first the current state (`initial`), then every change; the stream
    /// form of `subscribe(after:statusOnly:changes:waitForDaemon:reconnect:onEvent:onEnd:)`, whose
    /// thread reads the socket; terminating the stream (its task cancelled, or the stream dropped)
    /// cancels the subscription.
    ///
    /// When the daemon goes away (restart, upgrade) the stream reconnects with a short backoff
    /// and resumes with `Subscribe(after:)` from the last sequence number it yielded, so nothing
    /// is lost; an event is never yielded twice (a `resync` initial is, by design, a fresh start).
    /// - Parameters:
    ///   - after: resume after this sequence number (as `reachctl monitor --after`).
    ///   - statusOnly: only changes of status, connectivity or primary interface.
    ///   - changes: only events whose `changes` name one of these `Status` fields (with
    ///     `statusOnly`, either); nil for every event.
    ///   - waitForDaemon: when false, the stream fails with `daemonNotRunning` if no daemon answers
    ///     the first time; when true it waits for one.
    ///   - reconnect: when false, the stream ends with an error when the connection drops.
    ///   - onConnectionChange: told, on the subscription's thread, when the connection is lost
    ///     and reconnecting begins, and when reachd answers again (see `ConnectionChange`).
    public func events(after: Int? = nil, statusOnly: Bool = false, changes: [String]? = nil,
                       waitForDaemon: Bool = false, reconnect: Bool = true,
                       onConnectionChange: (@Sendable (ConnectionChange) -> Void)? = nil) -> AsyncThrowingStream<ReachabilityEvent, Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ReachabilityEvent.self, throwing: Error.self,
                                                                     bufferingPolicy: .unbounded)
        // The callbacks run on the subscription's thread, not on the cooperative pool.
        let subscription = EventSubscription(socketPath: socketPath, after: after, statusOnly: statusOnly,
                                             changes: changes, waitForDaemon: waitForDaemon, reconnect: reconnect,
                                             onEvent: { continuation.yield($0) },
                                             onEnd: { continuation.finish(throwing: $0) },
                                             onConnectionChange: onConnectionChange)
        continuation.onTermination = { _ in subscription.cancel() }
        subscription.start()
        return stream
    }
}

/// Decides whether a received event is new to a subscriber that has seen up to `lastSequence`:
/// older or repeated numbers are skipped, except a `resync` initial, which starts afresh.
public struct EventDeduplicator: Sendable {
    public private(set) var lastSequence: Int?

    public init(lastSequence: Int? = nil) { self.lastSequence = lastSequence }

    public mutating func admit(_ event: ReachabilityEvent) -> Bool {
        let isResync = event.event == .initial && event.reason.code == .resync
        if let lastSequence, event.sequence <= lastSequence, !isResync { return false }
        lastSequence = event.sequence
        return true
    }
}
