import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem

/// The HTTP/1.1 responder of `[Metrics] Listen=`: answers `GET /metrics` with what `metrics`
/// renders, and refuses everything else (`MetricsHTTPExchange`).
///
/// It is small and bounded on purpose, since anyone who can reach the port may connect: at most
/// `maxConnections` at once and `maxConnectionsPerPeer` from one address, one request per
/// connection, a request head of at most 8 KiB that must arrive within `requestTimeout`
/// (slowloris), and the whole exchange within `connectionTimeout` (a scraper that does not read
/// its answer). A connection over either bound takes the place of the oldest one still waiting
/// for its request head (from the same address first): sockets that never send a request
/// cannot keep a scraper out, since a scraper sends its request as soon as it connects. Only
/// when every connection is past its head is the new one answered 503. Sockets
/// are non-blocking and driven by Dispatch sources on `queue`, which is not the monitor's: a
/// scraper can delay other scrapes at worst, never an event.
public final class MetricsHTTPServer: @unchecked Sendable, QueueConfined {
    public struct Configuration: Sendable {
        public var maxConnections = 16
        /// Connections from one IP address at once.
        public var maxConnectionsPerPeer = 4
        /// Time for the request head to arrive after the connection is accepted: short, as a
        /// scraper sends it at once.
        public var requestTimeout: DispatchTimeInterval = .seconds(2)
        /// Time for the whole exchange: request, rendering and the answer read by the client.
        public var connectionTimeout: DispatchTimeInterval = .seconds(15)
        public init() {}
    }

    public let configuration: Configuration
    /// The queue that owns the server's state and calls `metrics`.
    public let queue: DispatchQueue
    private let metrics: () -> String
    private let log: LogSink
    package let queueConfinement: QueueConfinement

    // State, confined to `queue`.
    private var acceptor: Acceptor?
    var connections: [Int: MetricsHTTPConnection] = [:]
    private var nextID = 0

    /// - Parameters:
    ///   - metrics: renders the body of `GET /metrics`; called on `queue`.
    ///   - log: receives warnings (accept failures).
    public init(configuration: Configuration = Configuration(), queue: DispatchQueue,
                log: LogSink = .discarding, metrics: @escaping () -> String) {
        self.configuration = configuration
        self.queue = queue
        self.metrics = metrics
        self.log = log
        self.queueConfinement = QueueConfinement(queue)
    }

    /// Binds `address` and starts answering. Throws an `Errno` naming the call.
    public func listen(_ address: MetricsListenAddress) throws {
        var listening = Optional(try Self.bindListening(address))
        onQueue {
            guard let listening = listening.take() else { return }
            acceptor = Acceptor(listening, queue: queue, batch: 64,
                                onConnection: { [weak self] in self?.accepted($0) },
                                onFailure: { [weak self] failure in
                                    switch failure {
                                    case .paused(let error): self?.log.warning("metrics: \(error); pausing accept for 100 ms")
                                    case .failed(let error): self?.log.warning("metrics: \(error)")
                                    }
                                })
        }
    }

    /// Stops listening and closes every connection.
    public func stop() {
        onQueue {
            acceptor?.stop()
            acceptor = nil
            for connection in connections.values { connection.close() }
            connections.removeAll()
        }
    }

    /// Open connections (for tests and diagnostics).
    public var connectionCount: Int { onQueue { connections.count } }

    private func accepted(_ descriptor: consuming FileDescriptor) {
        let peer = descriptor.peerIPAddress()
        let fromPeer = connections.values.filter { $0.peer == peer }
        // Over a bound: the oldest connection still without its request head makes room, one
        // of the same address if that is the bound reached.
        if fromPeer.count >= configuration.maxConnectionsPerPeer {
            evictOldestWaiting(among: fromPeer)
        }
        if connections.count >= configuration.maxConnections {
            evictOldestWaiting(among: Array(connections.values))
        }
        if connections.count >= configuration.maxConnections
            || connections.values.filter({ $0.peer == peer }).count >= configuration.maxConnectionsPerPeer {
            // Best effort, never waiting: the socket buffer of a fresh connection takes it.
            var refusal = MetricsHTTPExchange.plain(503, "too many connections\n")
            refusal.headers.append(("Retry-After", "1"))
            let answer = refusal.bytes
            _ = answer.withUnsafeBytes { try? descriptor.send($0, dontWait: true) }
            try? descriptor.close()
            return
        }
        nextID += 1
        let connection = MetricsHTTPConnection(id: nextID, peer: peer, socket: ConnectionSocket(descriptor, queue: queue), server: self)
        connections[connection.id] = connection
        connection.start()
    }

    /// Closes the oldest of `candidates` that has not sent its request head yet, if any.
    private func evictOldestWaiting(among candidates: [MetricsHTTPConnection]) {
        guard let oldest = candidates.filter({ $0.waitingForRequest }).min(by: { $0.id < $1.id }) else { return }
        oldest.close()
    }

    func connectionClosed(_ connection: MetricsHTTPConnection) {
        connections[connection.id] = nil
    }

    /// The answer to a request head (on `queue`).
    func respond(to request: MetricsHTTPExchange.Request) -> MetricsHTTPExchange.Response? {
        MetricsHTTPExchange.respond(to: request, metrics: metrics)
    }

    /// A non-blocking TCP socket bound to `address` and listening (`SO_REUSEADDR`).
    static func bindListening(_ address: MetricsListenAddress) throws(Errno) -> FileDescriptor {
        // The parser accepted 4 or 16 bytes for the family, which is what IPAddress takes.
        guard let ip = IPAddress(bytes: address.addressBytes) else { throw Errno.invalidArgument.with(call: "bind") }
        return try FileDescriptor.listening(at: .ip(ip, port: UInt16(truncatingIfNeeded: address.port)), backlog: 64, reuseAddress: true)
    }
}
