import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem

/// One client connection of the server. Confined to the server's queue, except its reading:
/// bytes are received, cut into messages and parsed on the server's `ioQueue`, and the decoded
/// calls handed to the server's queue in one batch per wake-up, so that no client's bytes cost
/// the queue that delivers events (the monitor's, in reachd) more than handling its calls. The
/// read source is suspended while a batch is on its way and resumed when it has been handled:
/// at most one batch per connection is in flight.
///
/// Calls are answered in order: while one waits for an asynchronous handler (or has become a
/// subscription, which never ends), later calls wait in `pending`.
final class Connection: @unchecked Sendable {
    let id: Int
    private let socket: ConnectionSocket
    /// The peer's uid (`SO_PEERCRED`), for the per-user limits.
    let uid: UInt32

    /// Root's connections are sent an access point's address (`WiFi.bssid`); others, and a
    /// peer whose credentials could not be read, are not: it is location data.
    var seesLocation: Bool { uid == 0 }
    unowned let server: ReachabilityServer
    /// Confined to the server's `ioQueue`, as is `readStopped`.
    private var framer = VarlinkFramer()
    /// The reader met the end of the stream or an error: it reads no more.
    private var readStopped = false
    /// What this connection's framer holds in the server's `ioHeldBytes`.
    private var framerHeldBytes = 0
    private var outgoing: OutgoingQueue
    /// When the incomplete message in `framer` began (uptime ns); nil when there is none.
    private(set) var partialSince: UInt64?
    /// Bytes of waiting calls (`pending`), as received.
    private var pendingBytes = 0
    /// What this connection has reported to the server's incoming total.
    private(set) var incomingByteCount = 0
    /// Holds one of the server's `Check` slots; `cancelCheck` stops that check.
    var holdsCheckSlot = false
    var cancelCheck: ReachabilityServer.Cancel?
    /// Protocol warnings about this connection are rate-limited.
    private var warnings = LogRateLimiter()
    private var readSource: DispatchSourceRead?
    /// Made on the first EAGAIN only: most connections never need one.
    private var writeSource: DispatchSourceWrite?
    private var writeSourceActive = false
    private var pending: [(call: VarlinkCall, size: Int)] = []
    /// A call is in progress (an asynchronous handler, or a subscription).
    var busy = false
    /// What this connection subscribed with; nil while it is no subscriber. Becoming one (or
    /// ceasing to be) enters it in (or takes it out of) the server's list of subscribers.
    var subscription: SubscriptionFilter? {
        didSet {
            filtering = subscription?.filters ?? false
            if (subscription != nil) != (subscriberSlot != nil) {
                server.subscriptionChanged(of: self)
            } else {
                server.directDescriptorChanged(of: self)
            }
        }
    }
    /// The subscription has a filter (`statusOnly`, `changes`): its events go one by one. Kept
    /// apart from `subscription` so that asking does not copy the filter and its last status.
    private var filtering = false
    /// This connection's place in the server's list of subscribers; the server keeps it.
    var subscriberSlot: Int?

    /// The socket's descriptor while an event may go straight to it, the same bytes as to every
    /// other subscriber (no filter, nothing queued, not closing); -1 otherwise. The server's
    /// list of subscribers keeps a copy, told of every change, so an event's fan-out reads that
    /// list instead of each connection's memory.
    var directDescriptor: CInt {
        guard !filtering, !closing, !closed, outgoing.isEmpty else { return -1 }
        return socket.rawDescriptor ?? -1
    }
    /// The peer's credentials when it connected; nil if the kernel would not tell.
    let peer: (pid: Int32, uid: UInt32, gid: UInt32)?
    /// Dropped: flush what is queued (the error), then close.
    private var closing = false
    private(set) var closed = false

    init(id: Int, socket: ConnectionSocket, uid: UInt32, peer: (pid: Int32, uid: UInt32, gid: UInt32)?, server: ReachabilityServer) {
        self.id = id
        self.socket = socket
        self.uid = uid
        self.server = server
        self.peer = peer
        self.outgoing = OutgoingQueue(limits: server.configuration.queueLimits)
        instances = server.connectionObjects
        instances.add(1)
    }

    /// The server's count of connection objects; kept here, as the server may be gone by `deinit`.
    private let instances: InstanceCount

    deinit { instances.add(-1) }

    func start() {
        // Held strongly, as the write source's handler is: `close()` cancels both sources, which
        // lets go of the handlers. A weak reference would give every connection a side table
        // and make each retain on an event's fan-out take the slow path.
        let source = socket.makeReadSource(on: server.ioQueue) { self.readAvailable() }
        readSource = source
        source.resume()
    }

    // MARK: reading

    /// What one wake-up of the reader got: decoded calls with their sizes, then how it ended.
    private struct ReadBatch: Sendable {
        enum End: Sendable {
            /// The socket has no more for now.
            case drained
            /// A message that is not a varlink call: the connection closes.
            case protocolError(Error)
            /// Incomplete messages of all connections would hold more than `maxIncomingBytes`
            /// with this one's (this many bytes): it is closed.
            case incomingBytes(Int)
            /// End of stream; a partial message left in the framer is simply dropped.
            case endOfStream
            case failed(Errno)
        }
        var calls: [(call: VarlinkCall, size: Int)] = []
        var end = End.drained
        /// Bytes of an incomplete message in the framer afterwards.
        var partialBytes = 0
    }

    /// On `ioQueue`: receives what the socket has (a few reads, so one chatty client cannot
    /// starve the others), decodes it, and hands the batch to the server's queue.
    private func readAvailable() {
        guard !readStopped else { return }
        var batch = ReadBatch()
        var received = false
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        reading: for _ in 0..<8 {
            switch buffer.withUnsafeMutableBytes({ socket.receive(into: $0) }) {
            case .processed(let count) where count > 0:
                received = true
                framer.append(buffer[0..<count])
                do {
                    while let message = try framer.next() {
                        batch.calls.append((try VarlinkCodec.decodeCall(message), message.count))
                    }
                } catch {
                    batch.end = .protocolError(error)
                    break reading
                }
                // Incomplete messages are bounded here, where they are held: the server's
                // queue hears of them only after every connection's reader has run.
                let held = framer.pendingByteCount, delta = held - framerHeldBytes
                if delta > 0 && server.ioHeldBytes + delta > server.configuration.maxIncomingBytes {
                    batch.end = .incomingBytes(held)
                    break reading
                }
                server.ioHeldBytes += delta
                framerHeldBytes = held
            case .processed:
                batch.end = .endOfStream
                break reading
            case .wouldBlock:
                break reading
            case .failed(let error):
                batch.end = .failed(error)
                break reading
            }
        }
        switch batch.end {
        case .drained: break
        case .protocolError, .incomingBytes, .endOfStream, .failed: readStopped = true
        }
        guard received || readStopped else { return }
        batch.partialBytes = framer.pendingByteCount
        readSource?.suspend()
        server.queue.async { [batch] in
            self.handle(batch)
            // Always resumed, closed or not: a cancelled source runs its cancel handler (which
            // lets the descriptor close) only once resumed.
            self.readSource?.resume()
        }
    }

    /// On the server's queue: answers a batch's calls in order, then deals with how it ended.
    private func handle(_ batch: ReadBatch) {
        guard !closed else { return }
        for (call, size) in batch.calls {
            pending.append((call, size))
            pendingBytes += size
            // Answered as they come; only calls behind a running one wait.
            processPending()
            if closed { return }
            if pending.count > server.configuration.maxPendingCalls {
                reject(.tooManyPipelinedCalls, "more than \(server.configuration.maxPendingCalls) pipelined calls; closing")
                close()
                return
            }
        }
        switch batch.end {
        case .drained:
            processPending()
            if closed { return }
            accountIncoming(partialBytes: batch.partialBytes)
        case .protocolError(let error):
            reject(.protocolError, "\(error); closing")
            close()
        case .incomingBytes(let held):
            reject(.incomingBytes, "\(held) bytes of an incomplete message while all connections' reach \(server.configuration.maxIncomingBytes); closing")
            close()
            server.scheduleMemoryTrim()
        case .endOfStream:
            close()
        case .failed(let error):
            server.log(.debug, "connection \(id): \(error); closing")
            close()
        }
    }

    func processPending() {
        while !busy && !closed && !closing && !pending.isEmpty {
            let (call, size) = pending.removeFirst()
            pendingBytes -= size
            server.handle(call, on: self)
        }
    }

    /// Reports the bytes this connection holds unanswered (an incomplete message, waiting calls)
    /// to the server, and starts or ends the watch on an incomplete message.
    private func accountIncoming(partialBytes partial: Int) {
        if partial > 0 {
            if partialSince == nil {
                partialSince = DispatchTime.now().uptimeNanoseconds
                server.watchPartialMessage(of: self)
            }
        } else {
            partialSince = nil
        }
        let held = partial + pendingBytes
        let delta = held - incomingByteCount
        if delta > 0 && server.incomingBytes + delta > server.configuration.maxIncomingBytes {
            // The connection that grows past the budget is the one closed: reading on, then
            // closing an older one, would only churn memory for the same flood.
            reject(.incomingBytes, "\(held) bytes unanswered while all connections' reach \(server.configuration.maxIncomingBytes); closing")
            close()
            server.scheduleMemoryTrim()
            return
        }
        incomingByteCount = held
        if delta != 0 { server.incomingBytesChanged(by: delta) }
    }

    /// Unsent bytes of this connection.
    var queuedByteCount: Int { outgoing.byteCount }

    /// Runs `body`, which changes `outgoing`, and reports the change to the server's total.
    private func trackingQueue<T>(_ body: () -> T) -> T {
        let before = outgoing.byteCount, wasEmpty = outgoing.isEmpty
        let result = body()
        let delta = outgoing.byteCount - before
        if delta != 0 { server.queuedBytesChanged(by: delta) }
        if outgoing.isEmpty != wasEmpty { server.directDescriptorChanged(of: self) }
        return result
    }

    /// Counts `reason` and logs `message` about this connection, at most a few lines a second.
    func reject(_ reason: ReachabilityServer.Rejection, _ message: String) {
        server.count(reason)
        warn(message)
    }

    /// A protocol warning about this connection, rate-limited per connection.
    func warn(_ message: String) {
        let now = ReachabilityServer.monotonicSeconds()
        let (allowed, suppressed) = warnings.admit(now: now)
        guard allowed, server.connectionLog.admit(now: now).allowed else { return }
        server.log(.warning, "connection \(id) (uid \(uid)): \(TerminalText.escaped(message))" + (suppressed > 0 ? " (\(suppressed) more suppressed)" : ""))
    }

    // MARK: writing

    /// Sends a complete message (NUL included). A reply that does not fit the queue drops the
    /// connection: a subscriber with `SubscriberTooSlow`, anything else without a word.
    func send(_ message: Data, force: Bool = false) {
        message.withUnsafeBytes { send(message, bytes: $0, force: force) }
    }

    /// `send(_:force:)` with `message`'s bytes already at hand: an event's fan-out takes them
    /// once for every subscriber.
    private func send(_ message: Data, bytes: UnsafeRawBufferPointer, force: Bool) {
        guard !closed && !closing else { return }
        // Nothing waiting: hand the (shared) bytes straight to the socket; only what it does not
        // take is queued. The bounds are checked as `enqueue` would, so a message too big for the
        // queue is refused alike.
        if outgoing.isEmpty && (force || outgoing.limits.admits(messageOf: message.count)) {
            finishDirectSend(message, result: socket.send(bytes))
            return
        }
        server.makeRoomForQueued(message.count)
        if closed { return }
        switch trackingQueue({ outgoing.enqueue(message, force: force) }) {
        case .queued:
            flush()
        case .overflow(let dropped):
            if subscription != nil {
                dropTooSlow(dropped: dropped)
            } else {
                reject(.notReading, "does not read its replies; closing")
                close()
            }
        }
    }

    /// Deals with what a send of all of `message` straight to the socket did, with nothing
    /// queued before it: what the socket did not take is queued.
    func finishDirectSend(_ message: Data, result: IOResult) {
        guard result != .processed(message.count), !closed, !closing else { return }
        let written: Int
        switch result {
        case .processed(let count): written = count
        case .wouldBlock, .failed: written = -1
        }
        let blocked = result == .wouldBlock
        server.makeRoomForQueued(message.count - max(written, 0))
        if closed { return }
        trackingQueue {
            _ = outgoing.enqueue(message, force: true)
            if written > 0 { outgoing.consume(written) }
        }
        // The socket is full: wait for it; anything else (an error) goes through `flush`,
        // which closes.
        if blocked || written > 0 { waitForWritable() } else { flush() }
    }

    /// Delivers a published event if this subscription's filter admits it.
    func deliver(_ event: ReachabilityEvent, bytes: Data, force: Bool) {
        bytes.withUnsafeBytes { deliver(event, message: bytes, bytes: $0, force: force) }
    }

    /// `deliver(_:bytes:force:)` with the message's bytes already at hand (an event's fan-out).
    func deliver(_ event: ReachabilityEvent, message: Data, bytes: UnsafeRawBufferPointer, force: Bool) {
        guard !closing, subscriberSlot != nil else { return }
        // Without a filter every event goes out and the filter keeps nothing worth updating:
        // no copy of it per subscriber and event.
        guard filtering else { return send(message, bytes: bytes, force: force) }
        guard var filter = subscription else { return }
        guard filter.admit(event) else { return }
        subscription = filter
        send(message, bytes: bytes, force: force)
    }

    private func dropTooSlow(dropped: Int) {
        reject(.subscriberTooSlow, "subscriber does not read; dropped \(dropped) events, closing")
        server.noteDroppedSubscriber()
        subscription = nil
        var message = VarlinkCodec.encode(VarlinkError.subscriberTooSlow(dropped: dropped))
        message.append(0)
        trackingQueue { _ = outgoing.enqueue(message, force: true) }
        closing = true
        // It may never read again: close after a grace period whether the error got out or not.
        server.queue.asyncAfter(deadline: .now() + server.configuration.dropGrace) { [weak self] in
            self?.close()
        }
        flush()
    }

    private func flush() {
        while let head = outgoing.head {
            switch head.withUnsafeBytes({ socket.send($0) }) {
            case .processed(let written) where written > 0:
                trackingQueue { outgoing.consume(written) }
                continue
            case .wouldBlock:
                waitForWritable()
                return
            case .processed:
                server.log(.debug, "connection \(id): send: no progress; closing")
                close()
                return
            case .failed(let error):
                server.log(.debug, "connection \(id): \(error); closing")
                close()
                return
            }
        }
        if writeSourceActive, let writeSource {
            writeSource.suspend()
            writeSourceActive = false
        }
        if closing { close() }
    }

    private func waitForWritable() {
        if writeSource == nil {
            let source = socket.makeWriteSource { self.flush() }
            writeSource = source
            writeSourceActive = true
            source.resume()
        } else if !writeSourceActive, let writeSource {
            writeSourceActive = true
            writeSource.resume()
        }
    }

    // MARK: closing

    func close() {
        guard !closed else { return }
        closed = true
        subscription = nil
        pending.removeAll()
        pendingBytes = 0
        partialSince = nil
        server.releaseCheckSlot(of: self)
        // What it held no longer counts against the totals.
        if incomingByteCount != 0 { server.incomingBytesChanged(by: -incomingByteCount); incomingByteCount = 0 }
        trackingQueue { _ = outgoing.dropAll() }
        readSource?.cancel()
        // The reader's buffer goes, and what it held leaves the total, on the reader's queue.
        let server = self.server
        server.ioQueue.async {
            self.readStopped = true
            server.ioHeldBytes -= self.framerHeldBytes
            self.framerHeldBytes = 0
            self.framer = VarlinkFramer()
        }
        if let writeSource {
            // A suspended source never runs its cancel handler: resume it first.
            if !writeSourceActive { writeSource.resume(); writeSourceActive = true }
            writeSource.cancel()
        }
        server.connectionClosed(self)
        socket.close()
    }
}
