import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityHost
import ReachabilitySystem

/// The varlink server of reachd: `org.varlink.service` and `io.reachd.Reachability` on a Unix
/// stream socket.
///
/// It does not know the monitor: it starts from an initial event and is fed every later event by
/// `publish(_:)` (reachd wires `monitor.addObserver { server.publish($0) }`). All of its state
/// belongs to its serial `queue`; sockets are non-blocking and driven by Dispatch sources, so
/// neither a slow client nor the monitor ever waits for the other. Clients' bytes are received
/// and parsed on `ioQueue`: a client's input costs `queue` only the handling of its calls.
///
/// The queue may be the monitor's own (reachd does that): `publish` called on the server's queue
/// delivers at once, so an event is encoded and sent by the thread that classified it, without
/// waking another thread. Events are encoded with `WireJSONWriter`, and the `current` status of
/// one event is kept as bytes to serve as the next one's `previous`.
public final class ReachabilityServer: @unchecked Sendable, QueueConfined {
    /// Tunables; the defaults suit the daemon.
    public struct Configuration: Sendable {
        /// `[Events]`: events kept for `Subscribe(after:)`.
        public var events = ReachdConfiguration.EventsSection()
        /// `[Limits]`: connections over all users and per uid, how long a message may stay
        /// incomplete, replies queued for slow readers, `Check` calls in flight.
        /// (`ProbeMinInterval=` is the connectivity check's.)
        public var limits = ReachdConfiguration.LimitsSection()
        /// `[Socket]`: the mode of a socket file the server binds itself (0666: every local user
        /// may ask). Path and group are reachd's business.
        public var socket = ReachdConfiguration.SocketSection()
        /// Per-connection bound of unsent replies; a subscriber over it gets `SubscriberTooSlow`.
        public var queueLimits = OutgoingQueue.Limits()
        /// How long a dropped subscriber has to read its `SubscriberTooSlow` before it is closed.
        public var dropGrace: DispatchTimeInterval = .seconds(1)
        /// Calls a client may pipeline before it is cut off.
        public var maxPendingCalls = 64
        /// Bytes received but not yet answered (incomplete messages and calls waiting their
        /// turn) over all connections; the connection whose bytes would pass it is closed.
        public var maxIncomingBytes = 16 << 20
        /// `GetInfo`.
        public var vendor = "reachd"
        public var product = "reachd"
        public var version = ReachdVersion.string
        public var url = ReachdVersion.url

        public init() {}
    }

    /// Why the server turned a client away or closed its connection: each limit against abusive
    /// clients has a reason of its own (for logs and counters).
    public enum Rejection: String, CaseIterable, Sendable {
        /// `MaxConnections=` reached: the new connection is closed.
        case tooManyConnections = "too_many_connections"
        /// `MaxConnectionsPerUser=` reached for the caller's uid.
        case tooManyConnectionsForUser = "too_many_connections_for_user"
        /// `MaxChecksInFlight=` reached: the call gets `Busy`.
        case checksBusy = "checks_busy"
        /// `MaxChecksPerUser=` reached for the caller's uid: `Busy`.
        case checksBusyForUser = "checks_busy_for_user"
        /// A message stayed incomplete past `PartialMessageTimeout=`.
        case staleMessage = "stale_message"
        /// The bytes held for incomplete messages and waiting calls over all connections ran out;
        /// the connection that would pass the bound is closed.
        case incomingBytes = "incoming_bytes"
        /// `MaxQueuedBytes=` reached; the connection with the most unsent replies is closed.
        case queuedBytes = "queued_bytes"
        /// A client's own reply queue is full (it does not read).
        case notReading = "not_reading"
        /// A subscriber's queue is full (`SubscriberTooSlow`).
        case subscriberTooSlow = "subscriber_too_slow"
        /// Not varlink: too large, not UTF-8, not JSON, not a call.
        case protocolError = "protocol_error"
        /// More calls waiting behind a running one than allowed.
        case tooManyPipelinedCalls = "too_many_pipelined_calls"
    }

    /// Completes a method handler's call, from any thread.
    public typealias Completion = @Sendable (VarlinkMethodResult) -> Void
    /// Stops a handler's work for a caller that hung up.
    public typealias Cancel = @Sendable () -> Void
    /// `Check(host:, port:)`; returns how to cancel it (nil: it cannot be).
    public typealias CheckHandler = @Sendable (_ host: String, _ port: Int?, _ completion: @escaping Completion) -> Cancel?
    /// `Probe()`.
    public typealias ProbeHandler = @Sendable (_ completion: @escaping Completion) -> Void

    public let configuration: Configuration
    /// The serial queue that owns all server state. Don't call the blocking accessors from it.
    public let queue: DispatchQueue
    /// Where clients' bytes are received and parsed (`JSONParser`); only decoded calls reach
    /// `queue`. Serial and shared by all connections.
    public let ioQueue: DispatchQueue
    /// Where the `initial` events' time comes from.
    private let clock: ReachdClock

    // State, confined to `queue`.
    var history: EventHistory<HistoryEntry>
    var current: Status
    var connections: [Int: Connection] = [:]
    /// A connection that subscribed, with the descriptor an event may go straight to.
    struct Subscriber {
        let connection: Connection
        /// `connection.directDescriptor`, kept here (the connection reports each change) so that
        /// the fan-out's first walk reads this list alone, not a thousand connections' memory.
        var descriptor: CInt
    }
    /// The connections that subscribed, in one array: an event's fan-out walks it in order
    /// instead of every connection in a dictionary. Each one knows its slot.
    private(set) var subscribers: [Subscriber] = []
    /// The fan-out's scratch, by slot, kept between events so that an event allocates nothing:
    /// the descriptors sent to, and what each send did.
    private var fanOutDescriptors: [CInt] = []
    private var fanOutResults: [Int] = []
    /// `Connection` objects not yet freed, closed ones included.
    let connectionObjects = InstanceCount()
    private var nextConnectionID = 0
    private var acceptor: Acceptor?
    private var boundPath: String?
    private var initialCache: (sequence: Int, reason: Reason.Code, bytes: Data)?
    private var statusCache: (sequence: Int, bytes: Data)?
    /// The same two for callers who are not root, when the status shows an access point.
    private var publicInitialCache: (sequence: Int, reason: Reason.Code, bytes: Data)?
    private var publicStatusCache: (sequence: Int, bytes: Data)?
    /// The status `refresh` gave since the last event, for `GetStatus`.
    private var refreshed: Status?
    /// Replies that never change (`GetInfo`, interface descriptions), encoded once.
    var constantReplies: [String: Data] = [:]
    /// The JSON of the last status encoded (the last event's `current`), reused as the next
    /// event's `previous` and for `GetStatus`.
    private var statusJSONCache: (status: Status, json: [UInt8])?
    package let queueConfinement: QueueConfinement
    private var _checkHandler: CheckHandler?
    private var _probeHandler: ProbeHandler?
    private var _logSink = LogSink.discarding
    private var _simulateHandler: SimulateHandler?
    private var _hangUpHandler: HangUpHandler?
    private(set) var droppedSubscribers = 0
    var rejections: [Rejection: Int] = [:]
    private var connectionsPerUID: [UInt32: Int] = [:]
    var checksInFlight = 0
    var checksPerUID: [UInt32: Int] = [:]
    /// Unsent reply bytes over all connections.
    private(set) var queuedBytes = 0
    /// Received bytes not yet answered over all connections.
    private(set) var incomingBytes = 0
    /// Bytes of incomplete messages in all connections' framers; confined to `ioQueue`.
    var ioHeldBytes = 0
    /// Connections with an incomplete message, checked by `staleSweep`.
    private var partialConnections: Set<Int> = []
    private var staleSweep: DispatchSourceTimer?
    /// Rejections before there is a connection to blame (at accept) share one log budget.
    private var acceptLog = LogRateLimiter()
    /// Protocol warnings of all connections together: many abusive connections, each within
    /// its own budget, still make a few lines a second at most.
    var connectionLog = LogRateLimiter(burst: 20, interval: 0.2)
    private var trimScheduled = false

    /// - Parameter initial: the current state (`monitor.initialEvent()`); its sequence number is
    ///   where the history starts.
    /// - Parameter ioQueue: receives and parses clients' messages; give none but its own.
    /// - Parameter clock: the wall time of the `initial` events subscribers get (the daemon's
    ///   clock, so that its events and the server's agree).
    public init(initial: ReachabilityEvent, configuration: Configuration = Configuration(),
                queue: DispatchQueue = DispatchQueue(label: "reachd.server"),
                ioQueue: DispatchQueue = DispatchQueue(label: "reachd.clients"), clock: ReachdClock = .system) {
        self.configuration = configuration
        self.clock = clock
        self.queue = queue
        self.ioQueue = ioQueue
        self.current = initial.current
        self.history = EventHistory(capacity: configuration.events.history, sequence: initial.sequence)
        self.queueConfinement = QueueConfinement(queue)
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

    /// Answers `Simulate`; nil: `MethodNotImplemented`.
    public var simulateHandler: SimulateHandler? {
        get { onQueue { _simulateHandler } }
        set { onQueue { _simulateHandler = newValue } }
    }

    /// Told, on `queue`, of every connection that closes (a simulating caller hanging up).
    public var hangUpHandler: HangUpHandler? {
        get { onQueue { _hangUpHandler } }
        set { onQueue { _hangUpHandler = newValue } }
    }

    /// How often each limit has turned a client away since start.
    public var rejectionCounts: [Rejection: Int] { onQueue { rejections } }

    /// `Check` calls in flight now.
    public var checksInFlightCount: Int { onQueue { checksInFlight } }

    /// Takes the server's log (client errors, dropped subscribers); reachd passes its sink.
    public var logSink: LogSink {
        get { onQueue { _logSink } }
        set { onQueue { _logSink = newValue } }
    }

    // MARK: listening

    /// Binds a new socket at `path` and starts accepting. The file must not exist (reachd removes
    /// a stale one first); `stop()` removes it.
    /// Throws an `Errno` naming the call and the path.
    public func listen(at path: String) throws {
        var listening = Optional(try FileDescriptor.listening(at: .unix(path), backlog: 4096))
        do {
            try FileSystem.setMode(path, configuration.socket.mode)
        } catch {
            log(.warning, "\(error)")
        }
        onQueue {
            boundPath = path
            if let listening = listening.take() { startAccepting(listening) }
        }
    }

    /// Starts accepting on a listening socket someone else made (systemd socket activation, fd 3).
    /// The server takes the descriptor over; it does not remove the socket file.
    public func listen(fileDescriptor fd: Int32) throws {
        var listening = Optional(FileDescriptor(adopting: fd))
        try listening?.setNonBlocking()
        onQueue { if let listening = listening.take() { startAccepting(listening) } }
    }

    /// Stops accepting, closes every connection and removes the socket file it bound.
    public func stop() {
        onQueue {
            acceptor?.stop()
            acceptor = nil
            for connection in connections.values { connection.close() }
            connections.removeAll()
            staleSweep?.cancel()
            staleSweep = nil
            if let boundPath { try? FileSystem.remove(boundPath) }
            boundPath = nil
        }
    }

    /// Open client connections (for tests and diagnostics).
    public var connectionCount: Int { onQueue { connections.count } }

    /// Connections with a live subscription.
    public var subscriberCount: Int { onQueue { subscribers.count } }

    /// Reply and event bytes waiting in the connections' queues (their sockets were full).
    package var queuedByteCount: Int { onQueue { queuedBytes } }

    /// Connection objects still in memory, closed ones included: a closed connection that
    /// something still holds (a source's handler, a pending reply) shows here, not in
    /// `connectionCount`.
    package var connectionObjectCount: Int { connectionObjects.value }

    /// Subscribers dropped for not reading since start.
    public var droppedSubscriberCount: Int { onQueue { droppedSubscribers } }

    private func startAccepting(_ listening: consuming FileDescriptor) {
        // Bounded per wake-up so a connection storm cannot starve event delivery.
        acceptor = Acceptor(listening, queue: queue, batch: 256,
                            onConnection: { [weak self] in self?.accepted($0) },
                            onFailure: { [weak self] failure in
                                switch failure {
                                case .paused(let error): self?.log(.error, "\(error); pausing accept for 100 ms")
                                case .failed(let error): self?.log(.warning, "\(error)")
                                }
                            })
    }

    private func accepted(_ descriptor: consuming FileDescriptor) {
        let peer = descriptor.peerCredentials()
        let uid = peer?.uid
        if connections.count >= configuration.limits.maxConnections {
            try? descriptor.close()
            reject(.tooManyConnections, "connection from uid \(uid.map(String.init) ?? "?") refused: \(configuration.limits.maxConnections) connections open (MaxConnections=)")
            return
        }
        // No credentials (never expected on AF_UNIX) count as one unknown user.
        let owner = uid ?? UInt32.max
        if connectionsPerUID[owner, default: 0] >= configuration.limits.maxConnectionsPerUser {
            try? descriptor.close()
            reject(.tooManyConnectionsForUser, "connection from uid \(uid.map(String.init) ?? "?") refused: it has \(configuration.limits.maxConnectionsPerUser) open (MaxConnectionsPerUser=)")
            return
        }
        connectionsPerUID[owner, default: 0] += 1
        nextConnectionID += 1
        let connection = Connection(id: nextConnectionID, socket: ConnectionSocket(descriptor, queue: queue),
                                    uid: owner, peer: peer, server: self)
        connections[connection.id] = connection
        connection.start()
    }

    func connectionClosed(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        if let count = connectionsPerUID[connection.uid] {
            if count <= 1 { connectionsPerUID[connection.uid] = nil } else { connectionsPerUID[connection.uid] = count - 1 }
        }
        partialConnections.remove(connection.id)
        _hangUpHandler?(connection.id)
    }

    func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        _logSink.log(level, message())
    }

    /// Counts a rejection and logs it within the accept-time budget.
    func reject(_ reason: Rejection, _ message: String) {
        count(reason)
        let (allowed, suppressed) = acceptLog.admit(now: Self.monotonicSeconds())
        guard allowed else { return }
        log(.warning, message + (suppressed > 0 ? " (\(suppressed) similar messages suppressed)" : ""))
    }

    func count(_ reason: Rejection) {
        rejections[reason, default: 0] += 1
    }

    static func monotonicSeconds() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }

    // MARK: bounded buffers

    /// A connection's unsent bytes changed by `delta`.
    func queuedBytesChanged(by delta: Int) { queuedBytes += delta }

    /// Makes room for `bytes` more unsent bytes under `maxQueuedBytes` by closing the
    /// connections with the most queued, largest first.
    func makeRoomForQueued(_ bytes: Int) {
        while queuedBytes + bytes > configuration.limits.maxQueuedBytes {
            guard let victim = connections.values.max(by: { $0.queuedByteCount < $1.queuedByteCount }),
                  victim.queuedByteCount > 0 else { return }
            victim.reject(.queuedBytes, "has the most unsent replies (\(victim.queuedByteCount) bytes) while all connections' reach MaxQueuedBytes=\(configuration.limits.maxQueuedBytes); closing")
            victim.close()
            scheduleMemoryTrim()
        }
    }

    /// A connection's held incoming bytes changed by `delta` (it checked `maxIncomingBytes`).
    func incomingBytesChanged(by delta: Int) {
        incomingBytes += delta
    }

    /// After a flood was cut off, hands the memory its buffers took back to the system, at
    /// most once a second: freed buffers of many connections otherwise stay resident in
    /// malloc's arenas, and the daemon's size would be its worst moment's.
    func scheduleMemoryTrim() {
        guard !trimScheduled else { return }
        trimScheduled = true
        queue.asyncAfter(deadline: .now() + .milliseconds(200)) {
            ProcessSetup.trimMemory()
        }
        queue.asyncAfter(deadline: .now() + .milliseconds(1200)) { [weak self] in
            self?.trimScheduled = false
        }
    }

    /// A connection now holds an incomplete message: closed if it is still incomplete after
    /// `partialMessageTimeout`. One timer sweeps them all, armed only while there are some.
    func watchPartialMessage(of connection: Connection) {
        partialConnections.insert(connection.id)
        guard staleSweep == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let period = min(max(configuration.limits.partialMessageTimeoutSeconds / 4, 0.05), 1)
        timer.schedule(deadline: .now() + period, repeating: period)
        timer.setEventHandler { [weak self] in self?.sweepStaleMessages() }
        staleSweep = timer
        timer.resume()
    }

    private func sweepStaleMessages() {
        let now = DispatchTime.now().uptimeNanoseconds
        let limit = UInt64(configuration.limits.partialMessageTimeoutSeconds * 1e9)
        for id in partialConnections {
            guard let connection = connections[id], let since = connection.partialSince else {
                partialConnections.remove(id)
                continue
            }
            if now - since >= limit {
                connection.reject(.staleMessage, "message incomplete for more than \(configuration.limits.partialMessageTimeoutSeconds) s (PartialMessageTimeout=); closing")
                connection.close()
            }
        }
        if partialConnections.isEmpty {
            staleSweep?.cancel()
            staleSweep = nil
        }
    }

    func noteDroppedSubscriber() { droppedSubscribers += 1 }

    // MARK: events

    /// What the history keeps per event: the event and its encoded reply (with NUL), sent as is;
    /// `publicBytes` the reply for callers who are not root when it differs (an access point's
    /// address taken out: `ReachabilityEvent.withoutLocation`).
    struct HistoryEntry: Sendable, Equatable {
        let event: ReachabilityEvent
        let bytes: Data
        var publicBytes: Data? = nil

        /// The bytes `connection` may be sent.
        func bytes(for connection: Connection) -> Data {
            connection.seesLocation ? bytes : publicBytes ?? bytes
        }
    }

    /// Sends `event` to every subscriber whose filter admits it and records it for resumption.
    /// Callable from any thread; never blocks. On the server's queue (when it shares the
    /// monitor's) it delivers before it returns, elsewhere it hands the event to the queue.
    /// Events whose sequence number is not above the last one are ignored. An `initial` event
    /// with a higher number replaces the state (the source restarted its numbering): subscribers
    /// get it as `initial` with reason `resync`.
    public func publish(_ event: ReachabilityEvent) {
        if queueConfinement.isCurrent {
            handlePublish(event)
        } else {
            queue.async { self.handlePublish(event) }
        }
    }

    /// The current status moved on without an event (figures that are no change, such as a
    /// link's newest RTT): `GetStatus` shows it until the next event. Nobody is sent anything,
    /// and subscriptions start from the last event's status, which the next event follows.
    public func refresh(_ status: Status) {
        guard queueConfinement.isCurrent else { return queue.async { self.refresh(status) } }
        refreshed = status
        statusCache = nil
        publicStatusCache = nil
    }

    private func handlePublish(_ event: ReachabilityEvent) {
        guard event.sequence > history.sequence else {
            log(.debug, "ignoring event \(event.sequence): not after \(history.sequence)")
            return
        }
        switch event.event {
        case .initial:
            current = event.current
            refreshed = nil
            history.reset(sequence: event.sequence)
            let resync = ReachabilityEvent(sequence: event.sequence, timestamp: event.timestamp, event: .initial,
                                           reason: Reason(code: .resync), previous: nil, current: event.current)
            fanOutByCaller(resync, bytes: encodeEvent(resync), force: true)
        case .reachabilityChanged:
            current = event.current
            refreshed = nil
            let bytes = encodeEvent(event)
            let publicEvent = event.withoutLocation
            let publicBytes = publicEvent.map(encodeEvent)
            history.append(HistoryEntry(event: event, bytes: bytes, publicBytes: publicBytes), sequence: event.sequence)
            fanOutByCaller(event, bytes: bytes, publicEvent: publicEvent, publicBytes: publicBytes, force: false)
        }
    }

    /// `fanOut`, with an access point's address only for root's connections: when the event
    /// shows one, the others get it taken out (`ReachabilityEvent.withoutLocation`).
    private func fanOutByCaller(_ event: ReachabilityEvent, bytes: Data, publicEvent: ReachabilityEvent? = nil,
                                publicBytes: Data? = nil, force: Bool) {
        let stripped = publicEvent ?? event.withoutLocation
        guard let stripped else { return fanOut(event, bytes: bytes, force: force, to: subscribers) }
        let all = subscribers
        fanOut(event, bytes: bytes, force: force, to: all.filter { $0.connection.seesLocation })
        fanOut(stripped, bytes: publicBytes ?? encodeEvent(stripped), force: force, to: all.filter { !$0.connection.seesLocation })
    }

    /// Hands `event`'s one encoding to every subscriber: first the same bytes straight to each
    /// socket that may take them (one walk over the list's descriptors), then, one by one, the
    /// subscribers with a filter or a queue, and those whose socket did not take it all.
    private func fanOut(_ event: ReachabilityEvent, bytes: Data, force: Bool, to recipients: [Subscriber]) {
        // The list as it is now: a delivery that fails closes its connection (or, making room
        // in the queues, another one), which takes it out of `subscribers` while this walks it.
        let direct = force || configuration.queueLimits.admits(messageOf: bytes.count)
        if fanOutResults.count < recipients.count {
            let capacity = max(recipients.count, 2 * fanOutResults.count)
            fanOutResults = [Int](repeating: 0, count: capacity)
            fanOutDescriptors = [CInt](repeating: -1, count: capacity)
        }
        bytes.withUnsafeBytes { raw in
            if direct {
                fanOutDescriptors.withUnsafeMutableBufferPointer { descriptors in
                    for slot in recipients.indices { descriptors[slot] = recipients[slot].descriptor }
                    let taken = UnsafeBufferPointer(rebasing: descriptors[..<recipients.count])
                    fanOutResults.withUnsafeMutableBufferPointer { FileDescriptor.send(raw, toEach: taken, sent: $0) }
                }
            }
            for slot in recipients.indices {
                let connection = recipients[slot].connection
                guard direct, recipients[slot].descriptor >= 0 else {
                    connection.deliver(event, message: bytes, bytes: raw, force: force)
                    continue
                }
                let sent = fanOutResults[slot]
                if sent == raw.count { continue }
                connection.finishDirectSend(bytes, result: IOResult(sent: sent))
            }
        }
    }

    /// Keeps `subscribers` in step with `connection.subscription` (called when it became a
    /// subscriber or ceased to be one). Leaving swaps the last subscriber into the slot.
    func subscriptionChanged(of connection: Connection) {
        if connection.subscription != nil {
            guard connection.subscriberSlot == nil else { return }
            connection.subscriberSlot = subscribers.count
            subscribers.append(Subscriber(connection: connection, descriptor: connection.directDescriptor))
        } else if let slot = connection.subscriberSlot {
            let last = subscribers.removeLast()
            if last.connection !== connection {
                subscribers[slot] = last
                last.connection.subscriberSlot = slot
            }
            connection.subscriberSlot = nil
        }
    }

    /// Takes a subscriber's new `directDescriptor` (its filter, queue or closing changed).
    func directDescriptorChanged(of connection: Connection) {
        guard let slot = connection.subscriberSlot else { return }
        subscribers[slot].descriptor = connection.directDescriptor
    }

    /// The reply carrying `event`, encoded once, NUL included:
    /// `{"continues":true,"parameters":{"event":…}}` (what `VarlinkCodec.encodeReply` writes).
    func encodeEvent(_ event: ReachabilityEvent) -> Data {
        let previousJSON = event.previous.map { statusJSON($0) }
        let currentJSON = statusJSON(event.current)
        var writer = WireJSONWriter(capacity: 64 + (previousJSON?.count ?? 4) + 2 * currentJSON.count)
        writer.raw(#"{"continues":true,"parameters":{"event":"#)
        writer.write(event, previousJSON: previousJSON, currentJSON: currentJSON)
        writer.raw("}}\0")
        return writer.data
    }

    /// The JSON of `status`: the cached bytes when it is a copy of the status encoded last (an
    /// event's `previous` is the last event's `current`), else freshly written and kept. A copy,
    /// not merely an equal value: that check costs nothing, where comparing every field of two
    /// statuses that differ (each event's `current`) costs as much as the sharing saves.
    func statusJSON(_ status: Status) -> [UInt8] {
        if let cache = statusJSONCache, cache.status.isCopy(of: status) { return cache.json }
        let json = WireJSONWriter.json(status)
        statusJSONCache = (status, json)
        return json
    }

    /// The current state as the first reply of a subscription, cached per sequence number so a
    /// thousand subscribers arriving together cost one encoding.
    func initialEventBytes(reason: Reason.Code, for connection: Connection) -> (ReachabilityEvent, Data) {
        let event = ReachabilityEvent(sequence: history.sequence, timestamp: clock.now().wall, event: .initial,
                                      reason: Reason(code: reason), previous: nil, current: current)
        if !connection.seesLocation, let stripped = event.withoutLocation {
            if let cache = publicInitialCache, cache.sequence == history.sequence, cache.reason == reason {
                return (stripped, cache.bytes)
            }
            let bytes = encodeEvent(stripped)
            publicInitialCache = (history.sequence, reason, bytes)
            return (stripped, bytes)
        }
        if let cache = initialCache, cache.sequence == history.sequence, cache.reason == reason {
            return (event, cache.bytes)
        }
        let bytes = encodeEvent(event)
        initialCache = (history.sequence, reason, bytes)
        return (event, bytes)
    }

    /// `{"parameters":{"status":…}}` for `GetStatus`, cached per sequence number.
    func statusReplyBytes(for connection: Connection) -> Data {
        let shown = refreshed ?? current
        if !connection.seesLocation, let stripped = shown.withoutLocation {
            if let cache = publicStatusCache, cache.sequence == history.sequence { return cache.bytes }
            var writer = WireJSONWriter(capacity: 64 + 2048)
            writer.raw(#"{"parameters":{"status":"#)
            writer.raw(WireJSONWriter.json(stripped))
            writer.raw("}}\0")
            let bytes = writer.data
            publicStatusCache = (history.sequence, bytes)
            return bytes
        }
        if let cache = statusCache, cache.sequence == history.sequence { return cache.bytes }
        var writer = WireJSONWriter(capacity: 64 + 2048)
        writer.raw(#"{"parameters":{"status":"#)
        writer.raw(refreshed.map(WireJSONWriter.json) ?? statusJSON(current))
        writer.raw("}}\0")
        let bytes = writer.data
        statusCache = (history.sequence, bytes)
        return bytes
    }

    var checkHandlerOnQueue: CheckHandler? { _checkHandler }
    var probeHandlerOnQueue: ProbeHandler? { _probeHandler }
    var simulateHandlerOnQueue: SimulateHandler? { _simulateHandler }
}
