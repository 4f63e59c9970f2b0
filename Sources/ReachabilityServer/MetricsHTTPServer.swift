import Dispatch
import FoundationEssentials
import ReachabilityCore
#if canImport(Glibc)
import Glibc
#endif

/// The HTTP/1.1 responder of `[Metrics] Listen=`: answers `GET /metrics` with what `metrics`
/// renders, and refuses everything else (`MetricsHTTPExchange`).
///
/// It is small and bounded on purpose, since anyone who can reach the port may connect: at most
/// `maxConnections` at once (more are answered 503 and closed), one request per connection, a
/// request head of at most 8 KiB that must arrive within `requestTimeout` (slowloris), and the
/// whole exchange within `connectionTimeout` (a scraper that does not read its answer). Sockets
/// are non-blocking and driven by Dispatch sources on `queue`, which is not the monitor's: a
/// scraper can delay other scrapes at worst, never an event.
public final class MetricsHTTPServer: @unchecked Sendable, QueueConfined {
    public struct Configuration: Sendable {
        public var maxConnections = 16
        /// Time for the request head to arrive after the connection is accepted.
        public var requestTimeout: DispatchTimeInterval = .seconds(5)
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
    private var listenFD: Int32 = -1
    private var listenSource: DispatchSourceRead?
    private var acceptPaused = false
    var connections: [Int: MetricsHTTPConnection] = [:]
    private var nextID = 0
    private var _refused = 0

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

    /// Binds `address` and starts answering. Throws a `SocketError` naming the address.
    public func listen(_ address: MetricsListenAddress) throws {
        let fd = try Self.bindListening(address)
        onQueue {
            listenFD = fd
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            source.setEventHandler { [weak self] in self?.acceptPending() }
            source.setCancelHandler { close(fd) }
            listenSource = source
            source.resume()
        }
    }

    /// Stops listening and closes every connection.
    public func stop() {
        onQueue {
            if acceptPaused { listenSource?.resume(); acceptPaused = false }
            listenSource?.cancel()
            listenSource = nil
            for connection in connections.values { connection.close() }
            connections.removeAll()
        }
    }

    /// Open connections (for tests and diagnostics).
    public var connectionCount: Int { onQueue { connections.count } }
    /// Connections refused because `maxConnections` were open.
    public var refusedCount: Int { onQueue { _refused } }

    private func acceptPending() {
        for _ in 0..<64 {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                switch errno {
                case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED: return
                case EMFILE, ENFILE:
                    log.warning("metrics: \(SocketError("accept")); pausing accept for 100 ms")
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
                    log.warning("metrics: \(SocketError("accept"))")
                    return
                }
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            guard (try? UnixSocket.setNonBlocking(fd)) != nil else { close(fd); continue }
            if connections.count >= configuration.maxConnections {
                // Best effort, never waiting: the socket buffer of a fresh connection takes it.
                var refusal = MetricsHTTPExchange.plain(503, "too many connections\n")
                refusal.headers.append(("Retry-After", "1"))
                let answer = refusal.bytes
                _ = answer.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                close(fd)
                _refused += 1
                continue
            }
            nextID += 1
            let connection = MetricsHTTPConnection(id: nextID, fd: fd, server: self)
            connections[connection.id] = connection
            connection.start()
        }
    }

    func connectionClosed(_ connection: MetricsHTTPConnection) {
        connections[connection.id] = nil
    }

    /// The answer to a request head (on `queue`).
    func respond(to request: MetricsHTTPExchange.Request) -> MetricsHTTPExchange.Response? {
        MetricsHTTPExchange.respond(to: request, metrics: metrics)
    }

    /// A non-blocking TCP socket bound to `address` and listening.
    static func bindListening(_ address: MetricsListenAddress) throws -> Int32 {
        let domain = address.family == .ipv4 ? AF_INET : AF_INET6
        let fd = socket(domain, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound: Int32
        switch address.family {
        case .ipv4:
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = in_port_t(UInt16(address.port).bigEndian)
            withUnsafeMutableBytes(of: &sin.sin_addr) { $0.copyBytes(from: address.addressBytes) }
            bound = withUnsafePointer(to: &sin) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .ipv6:
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = in_port_t(UInt16(address.port).bigEndian)
            withUnsafeMutableBytes(of: &sin6.sin6_addr) { $0.copyBytes(from: address.addressBytes) }
            bound = withUnsafePointer(to: &sin6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
        guard bound == 0 else { let e = SocketError("bind"); close(fd); throw e }
        guard Glibc.listen(fd, 64) == 0 else { let e = SocketError("listen"); close(fd); throw e }
        return fd
    }
}
