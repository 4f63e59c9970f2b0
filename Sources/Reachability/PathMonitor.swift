import Dispatch
import Foundation
import ReachabilityCore
import ReachabilityLinux

/// NWPathMonitor's shape on reachd.
///
/// ```swift
/// let monitor = PathMonitor()
/// monitor.pathUpdateHandler = { path in print(path.status) }
/// monitor.start(queue: .global())
/// for await path in PathMonitor().paths { … }     // the current path, then every change
/// ```
/// A path update is sent when anything in the `Path` changes (interfaces, gateways, cost,
/// connectivity, …), never twice for the same path. Like NWPathMonitor, a monitor cannot be
/// restarted after `cancel()`.
public final class PathMonitor: @unchecked Sendable {
    public let requiredInterfaceType: InterfaceType?
    public let source: ReachabilitySource
    public let socketPath: String

    /// Configuration of the in-process monitor (no daemon, or `.inProcess`). Set before `start`.
    public var inProcessConfiguration: ReachabilityMonitor.Configuration {
        get { lock.withLock { _inProcessConfiguration } }
        set { lock.withLock { _inProcessConfiguration = newValue } }
    }

    /// What the in-process monitor runs besides netlink: ModemManager for the cellular generation
    /// and the connectivity check (both on by default, with reachd's defaults). Set before `start`.
    public var inProcessServices: InProcessServices {
        get { lock.withLock { _inProcessServices } }
        set { lock.withLock { _inProcessServices = newValue } }
    }

    /// Called on the start queue with the first path and every change.
    public var pathUpdateHandler: (@Sendable (Path) -> Void)? {
        get { lock.withLock { _pathUpdateHandler } }
        set { lock.withLock { _pathUpdateHandler = newValue } }
    }

    /// The queue given to `start(queue:)`.
    public var queue: DispatchQueue? { lock.withLock { _queue } }

    /// The latest path (`.unsatisfied` with no interfaces until the first one arrives).
    public var currentPath: Path { lock.withLock { _currentPath } }

    private let lock = NSLock()
    private var _inProcessConfiguration = ReachabilityMonitor.Configuration()
    private var _inProcessServices = InProcessServices()
    private var _pathUpdateHandler: (@Sendable (Path) -> Void)?
    private var _queue: DispatchQueue?
    private var _currentPath = Path.initial
    private var lastDelivered: Path?
    private var feed: StatusFeed?
    private var cancelled = false

    /// - Parameters:
    ///   - requiredInterfaceType: only interfaces of this type count (the path is unsatisfied
    ///     when none of them is up with carrier and addresses).
    ///   - source: `.auto` (default), `.daemon` (waits for the daemon), `.inProcess`.
    ///   - socketPath: reachd's socket; nil: `REACHD_SOCKET`, then the default paths.
    public init(requiredInterfaceType: InterfaceType? = nil, source: ReachabilitySource = .auto, socketPath: String? = nil) {
        self.requiredInterfaceType = requiredInterfaceType
        self.source = source
        self.socketPath = resolvedSocketPath(socketPath)
    }

    deinit { feed?.stop() }

    /// Starts delivering paths to `pathUpdateHandler` on `queue`. A second call does nothing.
    /// If the source cannot start (in-process netlink failure) the monitor reports an
    /// unsatisfied path and stays silent.
    public func start(queue: DispatchQueue) {
        let settings: FeedSettings? = lock.withLock {
            guard self.feed == nil, !cancelled else { return nil }
            _queue = queue
            return FeedSettings(source: source, socketPath: socketPath, monitorConfiguration: _inProcessConfiguration,
                         services: _inProcessServices)
        }
        guard let settings else { return }
        let feed = StatusFeed(settings: settings)
        lock.withLock { self.feed = feed }
        let required = requiredInterfaceType
        do {
            try feed.start(requireDaemon: false) { [weak self] status, _ in
                self?.update(Path(status, requiredInterfaceType: required), queue: queue)
            }
        } catch {
            update(Path.initial, queue: queue)
        }
    }

    /// Stops the updates; after it returns the handler is not called again.
    public func cancel() {
        let feed: StatusFeed? = lock.withLock {
            cancelled = true
            defer { self.feed = nil }
            return self.feed
        }
        feed?.stop()
    }

    /// Called on the feed's queue, in order.
    private func update(_ path: Path, queue: DispatchQueue) {
        let handler: (@Sendable (Path) -> Void)? = lock.withLock {
            guard !cancelled, lastDelivered != path else { return nil }
            lastDelivered = path
            _currentPath = path
            return _pathUpdateHandler
        }
        guard let handler else { return }
        queue.async { [weak self] in
            guard let self, !self.lock.withLock({ self.cancelled }) else { return }
            handler(path)
        }
    }

    /// The current path, then every change, as an AsyncSequence. Each access makes an
    /// independent stream (its own connection); it ends when the consumer stops iterating.
    /// Independent of `start(queue:)`: `for await path in PathMonitor().paths` works as is.
    public var paths: AsyncStream<Path> {
        let settings = lock.withLock {
            FeedSettings(source: source, socketPath: socketPath, monitorConfiguration: _inProcessConfiguration,
                         services: _inProcessServices)
        }
        return PathMonitor.pathStream(settings: settings, requiredInterfaceType: requiredInterfaceType)
    }

    static func pathStream(settings: FeedSettings, requiredInterfaceType: InterfaceType?) -> AsyncStream<Path> {
        let (stream, continuation) = AsyncStream.makeStream(of: Path.self, bufferingPolicy: .unbounded)
        let feed = StatusFeed(settings: settings)
        let last = LastValue<Path>()
        do {
            try feed.start(requireDaemon: false) { status, _ in
                let path = Path(status, requiredInterfaceType: requiredInterfaceType)
                if last.replace(with: path) { continuation.yield(path) }
            }
        } catch {
            continuation.yield(Path.initial)
            continuation.finish()
        }
        continuation.onTermination = { _ in feed.stop() }
        return stream
    }
}

/// The last value a stream yielded, for dropping repeats (called from one queue at a time).
final class LastValue<Value: Equatable & Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value?

    /// Stores `new`; true when it differs from the previous value.
    func replace(with new: Value) -> Bool {
        lock.withLock {
            guard value != new else { return false }
            value = new
            return true
        }
    }
}
