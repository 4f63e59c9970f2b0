import Dispatch
import Foundation
import ReachabilityCore
#if canImport(Glibc)
import Glibc
#endif

/// The varlink server of reachd: `org.varlink.service` and `io.reachd.Reachability` on a Unix
/// stream socket.
///
/// It does not know the monitor: it starts from an initial event and is fed every later event by
/// `publish(_:)` (reachd wires `monitor.addObserver { server.publish($0) }`). All of its state
/// belongs to its serial `queue`; sockets are non-blocking and driven by Dispatch sources, so
/// neither a slow client nor the monitor ever waits for the other.
///
/// The queue may be the monitor's own (reachd does that): `publish` called on the server's queue
/// delivers at once, so an event is encoded and sent by the thread that classified it, without
/// waking another thread. Events are encoded with `WireJSONWriter`, and the `current` status of
/// one event is kept as bytes to serve as the next one's `previous`.
public final class ReachabilityServer: @unchecked Sendable {
    /// Tunables; the defaults suit the daemon.
    public struct Configuration: Sendable {
        /// Events kept for `Subscribe(after:)` (`[Events] History=`).
        public var historySize = 256
        /// Per-connection bound of unsent replies; a subscriber over it gets `SubscriberTooSlow`.
        public var queueLimits = OutgoingQueue.Limits()
        /// How long a dropped subscriber has to read its `SubscriberTooSlow` before it is closed.
        public var dropGrace: DispatchTimeInterval = .seconds(1)
        /// Calls a client may pipeline before it is cut off.
        public var maxPendingCalls = 64
        /// Mode of a socket file the server binds itself (0666: every local user may ask).
        public var socketMode: mode_t = 0o666
        /// `GetInfo`.
        public var vendor = "reachd"
        public var product = "reachd"
        public var version = ReachdVersion.string
        public var url = ReachdVersion.url

        public init() {}
    }

    /// Severity of a log message from the server.
    public enum LogLevel: Int, Sendable, Comparable {
        case debug, info, warning, error
        public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
    }

    /// Completes a method handler's call, from any thread.
    public typealias Completion = @Sendable (VarlinkMethodResult) -> Void
    /// `Check(host:, port:)`.
    public typealias CheckHandler = @Sendable (_ host: String, _ port: Int?, _ completion: @escaping Completion) -> Void
    /// `Probe()`.
    public typealias ProbeHandler = @Sendable (_ completion: @escaping Completion) -> Void
    public typealias LogHandler = @Sendable (_ level: LogLevel, _ message: String) -> Void

    public let configuration: Configuration
    /// The serial queue that owns all server state. Don't call the blocking accessors from it.
    public let queue: DispatchQueue

    // State, confined to `queue`.
    var history: EventHistory<HistoryEntry>
    var current: Status
    var connections: [Int: Connection] = [:]
    private var nextConnectionID = 0
    private var listenFD: Int32 = -1
    private var listenSource: DispatchSourceRead?
    private var acceptPaused = false
    private var boundPath: String?
    private var initialCache: (sequence: Int, reason: Reason.Code, bytes: Data)?
    private var statusCache: (sequence: Int, bytes: Data)?
    /// The JSON of the last status encoded (the last event's `current`), reused as the next
    /// event's `previous` and for `GetStatus`.
    private var statusJSONCache: (status: Status, json: [UInt8])?
    private let queueKey = DispatchSpecificKey<Bool>()
    private var _checkHandler: CheckHandler?
    private var _probeHandler: ProbeHandler?
    private var _logHandler: LogHandler?
    private(set) var droppedSubscribers = 0
    /// Connections closed on their client, by reason (`statistics`).
    var rejections: [Rejection: Int] = [:]

    /// - Parameter initial: the current state (`monitor.initialEvent()`); its sequence number is
    ///   where the history starts.
    public init(initial: ReachabilityEvent, configuration: Configuration = Configuration(),
                queue: DispatchQueue = DispatchQueue(label: "reachd.server")) {
        self.configuration = configuration
        self.queue = queue
        self.current = initial.current
        self.history = EventHistory(capacity: configuration.historySize, sequence: initial.sequence)
        queue.setSpecific(key: queueKey, value: true)
    }

    /// Answers `Check`; nil: `MethodNotImplemented`. Set before `listen`, or from any thread but `queue`.
    public var checkHandler: CheckHandler? {
        get { onQueue { _checkHandler } }
        set { onQueue { _checkHandler = newValue } }
    }

    /// Answers `Probe`; nil: `ProbeDisabled`.
    public var probeHandler: ProbeHandler? {
        get { onQueue { _probeHandler } }
        set { onQueue { _probeHandler = newValue } }
    }

    /// Receives the server's log messages (client errors, dropped subscribers).
    public var logHandler: LogHandler? {
        get { onQueue { _logHandler } }
        set { onQueue { _logHandler = newValue } }
    }

    // MARK: listening

    /// Binds a new socket at `path` and starts accepting. The file must not exist (reachd removes
    /// a stale one first); `stop()` removes it.
    public func listen(at path: String) throws {
        let fd = try UnixSocket.listen(path: path)
        if chmod(path, configuration.socketMode) != 0 {
            log(.warning, "\(SocketError("chmod", path: path))")
        }
        onQueue {
            boundPath = path
            startAccepting(fd)
        }
    }

    /// Starts accepting on a listening socket someone else made (systemd socket activation, fd 3).
    /// The server takes the descriptor over; it does not remove the socket file.
    public func listen(fileDescriptor fd: Int32) throws {
        try UnixSocket.setNonBlocking(fd)
        onQueue { startAccepting(fd) }
    }

    /// Stops accepting, closes every connection and removes the socket file it bound.
    public func stop() {
        onQueue {
            if acceptPaused { listenSource?.resume(); acceptPaused = false }
            listenSource?.cancel()
            listenSource = nil
            for connection in connections.values { connection.close() }
            connections.removeAll()
            if let boundPath { unlink(boundPath) }
            boundPath = nil
        }
    }

    /// Open client connections (for tests and diagnostics).
    public var connectionCount: Int { onQueue { connections.count } }

    /// Connections with a live subscription.
    public var subscriberCount: Int { onQueue { connections.values.filter { $0.subscription != nil }.count } }

    /// Subscribers dropped for not reading since start.
    public var droppedSubscriberCount: Int { onQueue { droppedSubscribers } }

    private func startAccepting(_ fd: Int32) {
        listenFD = fd
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.acceptPending() }
        source.setCancelHandler { close(fd) }
        listenSource = source
        source.resume()
    }

    private func acceptPending() {
        // Bounded per wake-up so a connection storm cannot starve event delivery.
        for _ in 0..<256 {
            // accept4(2) is not visible without _GNU_SOURCE; accept + fcntl does the same.
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                switch errno {
                case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED: return
                case EMFILE, ENFILE:
                    // Out of descriptors: pause accepting briefly instead of spinning on a readable socket.
                    log(.error, "\(SocketError("accept")); pausing accept for 100 ms")
                    if let listenSource, !acceptPaused {
                        listenSource.suspend()
                        acceptPaused = true
                        queue.asyncAfter(deadline: .now() + .milliseconds(100)) { [weak self] in
                            guard let self, self.acceptPaused else { return }
                            self.acceptPaused = false
                            self.listenSource?.resume()
                        }
                    }
                    return
                default:
                    log(.warning, "\(SocketError("accept"))")
                    return
                }
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            guard (try? UnixSocket.setNonBlocking(fd)) != nil else { close(fd); continue }
            nextConnectionID += 1
            let connection = Connection(id: nextConnectionID, fd: fd, server: self)
            connections[connection.id] = connection
            connection.start()
        }
    }

    func connectionClosed(_ connection: Connection) {
        connections[connection.id] = nil
    }

    func log(_ level: LogLevel, _ message: String) {
        _logHandler?(level, message)
    }

    func noteDroppedSubscriber() {
        droppedSubscribers += 1
        noteRejection(.subscriberTooSlow)
    }

    // MARK: events

    /// What the history keeps per event: the event and its encoded reply (with NUL), sent as is.
    struct HistoryEntry: Sendable, Equatable {
        let event: ReachabilityEvent
        let bytes: Data
    }

    /// Sends `event` to every subscriber whose filter admits it and records it for resumption.
    /// Callable from any thread; never blocks. On the server's queue (when it shares the
    /// monitor's) it delivers before it returns, elsewhere it hands the event to the queue.
    /// Events whose sequence number is not above the last one are ignored. An `initial` event
    /// with a higher number replaces the state (the source restarted its numbering): subscribers
    /// get it as `initial` with reason `resync`.
    public func publish(_ event: ReachabilityEvent) {
        if DispatchQueue.getSpecific(key: queueKey) == true {
            handlePublish(event)
        } else {
            queue.async { self.handlePublish(event) }
        }
    }

    /// Runs `body` on `queue`: inline when already there (the queue may be the monitor's, whose
    /// observers run on it), else `sync`.
    func onQueue<T>(_ body: () throws -> T) rethrows -> T {
        if DispatchQueue.getSpecific(key: queueKey) == true { return try body() }
        return try queue.sync(execute: body)
    }

    private func handlePublish(_ event: ReachabilityEvent) {
        guard event.sequence > history.sequence else {
            log(.debug, "ignoring event \(event.sequence): not after \(history.sequence)")
            return
        }
        switch event.event {
        case .initial:
            current = event.current
            history.reset(sequence: event.sequence)
            let resync = ReachabilityEvent(sequence: event.sequence, timestamp: event.timestamp, event: .initial,
                                           reason: Reason(code: .resync), previous: nil, current: event.current)
            guard let bytes = encodeEvent(resync) else { return }
            for connection in connections.values where connection.subscription != nil {
                connection.deliver(resync, bytes: bytes, force: true)
            }
        case .reachabilityChanged:
            current = event.current
            guard let bytes = encodeEvent(event) else { return }
            history.append(HistoryEntry(event: event, bytes: bytes), sequence: event.sequence)
            for connection in connections.values where connection.subscription != nil {
                connection.deliver(event, bytes: bytes, force: false)
            }
        }
    }

    /// The reply carrying `event`, encoded once, NUL included:
    /// `{"continues":true,"parameters":{"event":…}}` (what `VarlinkCodec.encodeReply` writes).
    /// Never fails; optional for the callers written when encoding could.
    func encodeEvent(_ event: ReachabilityEvent) -> Data? {
        let previousJSON = event.previous.map { statusJSON($0) }
        let currentJSON = statusJSON(event.current)
        var writer = WireJSONWriter(capacity: 64 + (previousJSON?.count ?? 4) + 2 * currentJSON.count)
        writer.raw(#"{"continues":true,"parameters":{"event":"#)
        writer.write(event, previousJSON: previousJSON, currentJSON: currentJSON)
        writer.raw("}}\0")
        return Data(writer.bytes)
    }

    /// The JSON of `status`: the cached bytes when it is the status encoded last (an event's
    /// `previous` is the last event's `current`), else freshly written and kept.
    func statusJSON(_ status: Status) -> [UInt8] {
        if let cache = statusJSONCache, cache.status == status { return cache.json }
        let json = WireJSONWriter.json(status)
        statusJSONCache = (status, json)
        return json
    }

    /// The current state as the first reply of a subscription, cached per sequence number so a
    /// thousand subscribers arriving together cost one encoding.
    func initialEventBytes(reason: Reason.Code) -> (ReachabilityEvent, Data)? {
        let event = ReachabilityEvent(sequence: history.sequence, timestamp: Date(), event: .initial,
                                      reason: Reason(code: reason), previous: nil, current: current)
        if let cache = initialCache, cache.sequence == history.sequence, cache.reason == reason {
            return (event, cache.bytes)
        }
        guard let bytes = encodeEvent(event) else { return nil }
        initialCache = (history.sequence, reason, bytes)
        return (event, bytes)
    }

    /// `{"parameters":{"status":…}}` for `GetStatus`, cached per sequence number.
    func statusReplyBytes() throws -> Data {
        if let cache = statusCache, cache.sequence == history.sequence { return cache.bytes }
        var writer = WireJSONWriter(capacity: 64 + 2048)
        writer.raw(#"{"parameters":{"status":"#)
        writer.raw(statusJSON(current))
        writer.raw("}}\0")
        let bytes = Data(writer.bytes)
        statusCache = (history.sequence, bytes)
        return bytes
    }

    var checkHandlerOnQueue: CheckHandler? { _checkHandler }
    var probeHandlerOnQueue: ProbeHandler? { _probeHandler }
}
