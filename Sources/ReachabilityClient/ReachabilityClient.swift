import Foundation
import ReachabilityCore

/// A client of reachd's varlink API (`io.reachd.Reachability`).
///
/// ```swift
/// let client = ReachabilityClient()              // REACHD_SOCKET or the default paths
/// let status = try await client.status()
/// for try await event in client.events() { print(event.reason.code, event.current.status) }
/// ```
public struct ReachabilityClient: Sendable {
    public static let interface = "io.reachd.Reachability"

    public let socketPath: String
    /// Timeout of one-shot calls.
    public var callTimeout: TimeInterval

    /// - Parameter socketPath: nil resolves as in DESIGN.md §3 (`ReachabilitySocketPath.resolve`).
    public init(socketPath: String? = nil, callTimeout: TimeInterval = 30) {
        self.socketPath = ReachabilitySocketPath.resolve(explicit: socketPath)
        self.callTimeout = callTimeout
    }

    /// The daemon's current status (`GetStatus`).
    public func status() async throws -> Status {
        try await call(method: "\(Self.interface).GetStatus").decode(Status.self, key: "status")
    }

    /// Any single-reply method: `call(method: "io.reachd.Reachability.Check", parameters: ["host": .string("example.com")])`.
    /// Throws `.remote` for a varlink error reply.
    public func call(method: String, parameters: [String: JSONValue] = [:]) async throws -> VarlinkReply {
        let path = socketPath, timeout = callTimeout
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    let connection = try VarlinkConnection(socketPath: path, timeout: timeout)
                    defer { connection.close() }
                    return try connection.call(VarlinkCall(method: method, parameters: parameters))
                })
            }
        }
    }

    /// Reachability events: first the current state (`initial`), then every change.
    ///
    /// When the daemon goes away (restart, upgrade) the stream reconnects with a short backoff
    /// and resumes with `Subscribe(after:)` from the last sequence number it yielded, so nothing
    /// is lost; an event is never yielded twice (a `resync` initial is, by design, a fresh start).
    /// - Parameters:
    ///   - after: resume after this sequence number (as `reachctl monitor --after`).
    ///   - statusOnly: only changes of status, connectivity or primary interface.
    ///   - waitForDaemon: when false, the stream fails with `daemonNotRunning` if no daemon answers
    ///     the first time; when true it waits for one.
    ///   - reconnect: when false, the stream ends with an error when the connection drops.
    public func events(after: Int? = nil, statusOnly: Bool = false, waitForDaemon: Bool = false,
                       reconnect: Bool = true) -> AsyncThrowingStream<ReachabilityEvent, Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ReachabilityEvent.self, throwing: Error.self,
                                                                     bufferingPolicy: .unbounded)
        let worker = EventStreamWorker(socketPath: socketPath, after: after, statusOnly: statusOnly,
                                       waitForDaemon: waitForDaemon, reconnect: reconnect, continuation: continuation)
        continuation.onTermination = { _ in worker.cancel() }
        worker.start()
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

/// The thread behind `events()`: blocking reads on a dedicated thread, reconnecting as needed.
final class EventStreamWorker: @unchecked Sendable {
    private let socketPath: String
    private let statusOnly: Bool
    private let waitForDaemon: Bool
    private let reconnect: Bool
    private let continuation: AsyncThrowingStream<ReachabilityEvent, Error>.Continuation
    private let lock = NSLock()
    private var cancelled = false
    private var connection: VarlinkConnection?
    private let wakeUp = DispatchSemaphore(value: 0)
    private var deduplicator: EventDeduplicator

    init(socketPath: String, after: Int?, statusOnly: Bool, waitForDaemon: Bool, reconnect: Bool,
         continuation: AsyncThrowingStream<ReachabilityEvent, Error>.Continuation) {
        self.socketPath = socketPath; self.statusOnly = statusOnly; self.waitForDaemon = waitForDaemon
        self.reconnect = reconnect; self.continuation = continuation
        self.deduplicator = EventDeduplicator(lastSequence: after)
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "reachd.client.events"
        thread.start()
    }

    func cancel() {
        lock.withLock {
            cancelled = true
            connection?.shutdown()
        }
        wakeUp.signal()
    }

    private var isCancelled: Bool { lock.withLock { cancelled } }

    private func run() {
        var everConnected = false
        var backoff: TimeInterval = 0.05
        while !isCancelled {
            do {
                let connection = try VarlinkConnection(socketPath: socketPath)
                let proceed = lock.withLock { () -> Bool in
                    guard !cancelled else { return false }
                    self.connection = connection
                    return true
                }
                guard proceed else { connection.close(); break }
                defer { lock.withLock { self.connection = nil }; connection.close() }
                everConnected = true
                var parameters: [String: JSONValue] = [:]
                if let after = deduplicator.lastSequence { parameters["after"] = .int(after) }
                if statusOnly { parameters["statusOnly"] = .bool(true) }
                try connection.send(VarlinkCall(method: "\(ReachabilityClient.interface).Subscribe", parameters: parameters, more: true))
                while true {
                    let reply = try connection.receive()
                    if let error = reply.error {
                        let remote = VarlinkError(error, parameters: reply.parameters)
                        // Dropped for being slow: resume from the last event, the history has the rest.
                        if error == VarlinkError.subscriberTooSlow(dropped: 0).name && reconnect { break }
                        continuation.finish(throwing: ReachabilityClientError.remote(remote))
                        return
                    }
                    let event = try reply.decode(ReachabilityEvent.self, key: "event")
                    backoff = 0.05
                    if deduplicator.admit(event) { continuation.yield(event) }
                }
            } catch ReachabilityClientError.daemonNotRunning(let path) where !everConnected && !waitForDaemon {
                continuation.finish(throwing: ReachabilityClientError.daemonNotRunning(socketPath: path))
                return
            } catch let error as ReachabilityClientError {
                if isCancelled { break }
                switch error {
                case .daemonNotRunning, .connectionClosed, .timedOut:
                    if !reconnect && everConnected { continuation.finish(throwing: error); return }
                case .connectionFailed, .protocolError, .remote:
                    if !reconnect { continuation.finish(throwing: error); return }
                }
            } catch {
                if isCancelled { break }
                if !reconnect { continuation.finish(throwing: error); return }
            }
            if isCancelled { break }
            _ = wakeUp.wait(timeout: .now() + backoff)
            backoff = min(backoff * 2, 1.0)
        }
        continuation.finish()
    }
}
