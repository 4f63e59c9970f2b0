import ReachabilityCore

/// Who hears the monitor: its observers, its quiet observers (figures that moved without an
/// event), its routing observers and the `events()` streams, in the order they came. Kept and
/// called on the monitor's queue. A class, so that a handler may add or remove subscribers
/// while it is called (each look-up is an access of its own; a removed one is not called).
final class MonitorSubscribers: @unchecked Sendable {
    private var observers: [Int: @Sendable (ReachabilityEvent) -> Void] = [:]
    private var quietObservers: [Int: @Sendable (Status) -> Void] = [:]
    private var routingObservers: [Int: @Sendable () -> Void] = [:]
    private var recheckObservers: [Int: @Sendable (_ index: Int, _ path: Bool) -> Void] = [:]
    private var streams: [Int: AsyncStream<ReachabilityEvent>.Continuation] = [:]
    private var lastID = 0

    /// Nobody hears events.
    var isEmpty: Bool { observers.isEmpty && streams.isEmpty }

    func add(_ handler: @escaping @Sendable (ReachabilityEvent) -> Void) -> Int {
        let id = nextID()
        observers[id] = handler
        return id
    }

    func addQuiet(_ handler: @escaping @Sendable (Status) -> Void) -> Int {
        let id = nextID()
        quietObservers[id] = handler
        return id
    }

    func addRouting(_ handler: @escaping @Sendable () -> Void) -> Int {
        let id = nextID()
        routingObservers[id] = handler
        return id
    }

    func addRecheck(_ handler: @escaping @Sendable (_ index: Int, _ path: Bool) -> Void) -> Int {
        let id = nextID()
        recheckObservers[id] = handler
        return id
    }

    func add(_ stream: AsyncStream<ReachabilityEvent>.Continuation) -> Int {
        let id = nextID()
        streams[id] = stream
        return id
    }

    func remove(_ id: Int) {
        observers[id] = nil
        quietObservers[id] = nil
        routingObservers[id] = nil
        recheckObservers[id] = nil
        streams[id] = nil
    }

    /// The streams finish (the monitor stopped); the observers stay.
    func finishStreams() {
        let finished = streams
        streams = [:]
        for continuation in finished.values { continuation.finish() }
    }

    func emit(_ event: ReachabilityEvent) {
        for id in observers.keys.sorted() { observers[id]?(event) }
        for id in streams.keys.sorted() { streams[id]?.yield(event) }
    }

    func quiet(_ status: Status) {
        for id in quietObservers.keys.sorted() { quietObservers[id]?(status) }
    }

    func routingChanged() {
        for id in routingObservers.keys.sorted() { routingObservers[id]?() }
    }

    func recheck(index: Int, path: Bool) {
        for id in recheckObservers.keys.sorted() { recheckObservers[id]?(index, path) }
    }

    private func nextID() -> Int {
        lastID += 1
        return lastID
    }
}
