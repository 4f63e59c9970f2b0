import ReachabilityCore

/// Who hears the monitor: its observers, its quiet observers (figures that moved without an
/// event), its routing observers and the `events()` streams, in the order they came. Kept and
/// called on the monitor's queue. A class, so that a handler may add or remove subscribers
/// while it is called (those added then are not called this time; a removed one is not called).
/// Lists in the order of their ids, not dictionaries: a handful each, called at every event
/// without sorting keys or hashing them.
final class MonitorSubscribers: @unchecked Sendable {
    private var observers: [(id: Int, handler: @Sendable (ReachabilityEvent) -> Void)] = []
    private var quietObservers: [(id: Int, handler: @Sendable (Status) -> Void)] = []
    private var routingObservers: [(id: Int, handler: @Sendable () -> Void)] = []
    private var recheckObservers: [(id: Int, handler: @Sendable (_ index: Int, _ path: Bool) -> Void)] = []
    private var streams: [(id: Int, continuation: AsyncStream<ReachabilityEvent>.Continuation)] = []
    private var lastID = 0

    /// Nobody hears events.
    var isEmpty: Bool { observers.isEmpty && streams.isEmpty }

    func add(_ handler: @escaping @Sendable (ReachabilityEvent) -> Void) -> Int {
        let id = nextID()
        observers.append((id, handler))
        return id
    }

    func addQuiet(_ handler: @escaping @Sendable (Status) -> Void) -> Int {
        let id = nextID()
        quietObservers.append((id, handler))
        return id
    }

    func addRouting(_ handler: @escaping @Sendable () -> Void) -> Int {
        let id = nextID()
        routingObservers.append((id, handler))
        return id
    }

    func addRecheck(_ handler: @escaping @Sendable (_ index: Int, _ path: Bool) -> Void) -> Int {
        let id = nextID()
        recheckObservers.append((id, handler))
        return id
    }

    func add(_ stream: AsyncStream<ReachabilityEvent>.Continuation) -> Int {
        let id = nextID()
        streams.append((id, stream))
        return id
    }

    func remove(_ id: Int) {
        observers.removeAll { $0.id == id }
        quietObservers.removeAll { $0.id == id }
        routingObservers.removeAll { $0.id == id }
        recheckObservers.removeAll { $0.id == id }
        streams.removeAll { $0.id == id }
    }

    /// The streams finish (the monitor stopped); the observers stay.
    func finishStreams() {
        let finished = streams
        streams = []
        for stream in finished { stream.continuation.finish() }
    }

    func emit(_ event: ReachabilityEvent) {
        let called = observers
        for observer in called where observers.contains(where: { $0.id == observer.id }) { observer.handler(event) }
        let yielded = streams
        for stream in yielded where streams.contains(where: { $0.id == stream.id }) { stream.continuation.yield(event) }
    }

    func quiet(_ status: Status) {
        let called = quietObservers
        for observer in called where quietObservers.contains(where: { $0.id == observer.id }) { observer.handler(status) }
    }

    func routingChanged() {
        let called = routingObservers
        for observer in called where routingObservers.contains(where: { $0.id == observer.id }) { observer.handler() }
    }

    func recheck(index: Int, path: Bool) {
        let called = recheckObservers
        for observer in called where recheckObservers.contains(where: { $0.id == observer.id }) { observer.handler(index, path) }
    }

    private func nextID() -> Int {
        lastID += 1
        return lastID
    }
}
