import Dispatch
import Foundation
import ReachabilityCore
import ReachabilityLinux
import Synchronization

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
        get { shared.withLock { $0.inProcessConfiguration } }
        set { shared.withLock { $0.inProcessConfiguration = newValue } }
    }

    /// What the in-process monitor runs besides netlink: ModemManager for the cellular generation
    /// and the connectivity check (both on by default, with reachd's defaults). Set before `start`.
    public var inProcessServices: InProcessServices {
        get { shared.withLock { $0.inProcessServices } }
        set { shared.withLock { $0.inProcessServices = newValue } }
    }

    /// Where the in-process monitor, its ModemManager source and its connectivity check log
    /// (what reachd would write to its journal: a failed check, ModemManager gone, a forged
    /// netlink message). nil (default): nowhere, so the library writes nothing to the app's
    /// stderr. A daemon answering logs nothing here. Set before `start`.
    public var inProcessLog: LogSink? {
        get { shared.withLock { $0.inProcessLog } }
        set { shared.withLock { $0.inProcessLog = newValue } }
    }

    /// Called on the start queue with the first path and every change.
    public var pathUpdateHandler: (@Sendable (Path) -> Void)? {
        get { shared.withLock { $0.pathUpdateHandler } }
        set { shared.withLock { $0.pathUpdateHandler = newValue } }
    }

    /// The queue given to `start(queue:)`.
    public var queue: DispatchQueue? { shared.withLock { $0.queue } }

    /// The latest path (`.unsatisfied` with no interfaces until the first one arrives).
    public var currentPath: Path { shared.withLock { $0.currentPath } }

    private struct Shared {
        var inProcessConfiguration = ReachabilityMonitor.Configuration()
        var inProcessServices = InProcessServices()
        var inProcessLog: LogSink?
        var pathUpdateHandler: (@Sendable (Path) -> Void)?
        var queue: DispatchQueue?
        var currentPath = Path.initial
        var lastDelivered: Path?
        var feed: StatusFeed?
        var cancelled = false
    }
    private let shared = Mutex(Shared())

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

    deinit { shared.withLock { $0.feed }?.stop() }

    /// Starts delivering paths to `pathUpdateHandler` on `queue`. A second call does nothing.
    /// If the source cannot start (in-process netlink failure) the monitor reports an
    /// unsatisfied path and stays silent.
    public func start(queue: DispatchQueue) {
        let source = self.source, socketPath = self.socketPath
        let settings: FeedSettings? = shared.withLock { shared in
            guard shared.feed == nil, !shared.cancelled else { return nil }
            shared.queue = queue
            return FeedSettings(source: source, socketPath: socketPath, monitorConfiguration: shared.inProcessConfiguration,
                                services: shared.inProcessServices, log: shared.inProcessLog ?? .discarding)
        }
        guard let settings else { return }
        let feed = StatusFeed(settings: settings)
        shared.withLock { $0.feed = feed }
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
        let feed: StatusFeed? = shared.withLock { shared in
            shared.cancelled = true
            defer { shared.feed = nil }
            return shared.feed
        }
        feed?.stop()
    }

    /// Called on the feed's queue, in order.
    private func update(_ path: Path, queue: DispatchQueue) {
        let handler: (@Sendable (Path) -> Void)? = shared.withLock { shared in
            guard !shared.cancelled, shared.lastDelivered != path else { return nil }
            shared.lastDelivered = path
            shared.currentPath = path
            return shared.pathUpdateHandler
        }
        guard let handler else { return }
        queue.async { [weak self] in
            guard let self, !self.shared.withLock({ $0.cancelled }) else { return }
            handler(path)
        }
    }

    /// The current path, then every change, as an AsyncSequence. Each access makes an
    /// independent stream (its own connection); it ends when the consumer stops iterating.
    /// Independent of `start(queue:)`: `for await path in PathMonitor().paths` works as is.
    public var paths: AsyncStream<Path> {
        let source = self.source, socketPath = self.socketPath
        let settings = shared.withLock { shared in
            FeedSettings(source: source, socketPath: socketPath, monitorConfiguration: shared.inProcessConfiguration,
                         services: shared.inProcessServices, log: shared.inProcessLog ?? .discarding)
        }
        return PathMonitor.pathStream(settings: settings, requiredInterfaceType: requiredInterfaceType)
    }

    static func pathStream(settings: FeedSettings, requiredInterfaceType: InterfaceType?) -> AsyncStream<Path> {
        let (stream, continuation) = AsyncStream.makeStream(of: Path.self, bufferingPolicy: .unbounded)
        let feed = StatusFeed(settings: settings)
        let last = SharedMutex<Path?>(nil)
        do {
            try feed.start(requireDaemon: false) { status, _ in
                let path = Path(status, requiredInterfaceType: requiredInterfaceType)
                if last.replaceIfChanged(with: path) { continuation.yield(path) }
            }
        } catch {
            continuation.yield(Path.initial)
            continuation.finish()
        }
        continuation.onTermination = { _ in feed.stop() }
        return stream
    }
}

extension SharedMutex {
    /// Stores `new` as the last value a stream yielded; true when it differs from the previous
    /// one (so repeats are dropped).
    func replaceIfChanged<Wrapped: Equatable>(with new: Wrapped) -> Bool where Value == Wrapped? {
        withLock { value in
            guard value != new else { return false }
            value = new
            return true
        }
    }
}
