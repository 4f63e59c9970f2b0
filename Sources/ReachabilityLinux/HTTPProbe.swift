import FoundationEssentials
import ReachabilityCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 GET over a plain socket bound to an interface: the connectivity check.
///
/// FoundationNetworking's URLSession cannot bind to an interface and mishandles relative
/// redirects, so this speaks HTTP itself: resolve (with a deadline, see
/// `HostResolver`), a non-blocking socket with SO_BINDTODEVICE on the primary interface (or bound
/// to one of its addresses where that is not permitted), connect, send the request, read the
/// response until it is complete, closed or the deadline passes. Redirects are not followed:
/// a redirect is what a captive portal looks like. `Timeout=` covers everything, DNS included.
///
/// Each check runs on a thread of a `WorkerPool` made in advance (the connectivity checker's
/// own, which no `Check` flood can take) and reports with a completion on that thread, so a
/// hanging server or resolver never blocks the monitor's queue or the next check.
public enum HTTPProbe {
    public struct Request: Sendable {
        public var url: ProbeURL
        /// The interface to bind to (SO_BINDTODEVICE); nil: let the routing table choose.
        public var interface: String?
        /// Addresses of `interface` to bind to instead when SO_BINDTODEVICE is not permitted.
        public var sourceAddresses: [String]
        /// Seconds for the whole check.
        public var timeout: TimeInterval
        /// Create the socket (and resolve) inside this network namespace (tests); nil: the current one.
        public var networkNamespace: String?
        public var maxBodyBytes: Int
        /// Resolves a host name; nil: a `HostResolver` with `timeout` in `networkNamespace`.
        /// (The checker shares one, which bounds the threads a hanging DNS can hold.)
        public var resolver: HostResolver?

        public init(url: ProbeURL, interface: String? = nil, sourceAddresses: [String] = [], timeout: TimeInterval = 5,
                    networkNamespace: String? = nil, maxBodyBytes: Int = 64 * 1024, resolver: HostResolver? = nil) {
            self.url = url; self.interface = interface; self.sourceAddresses = sourceAddresses
            self.timeout = timeout; self.networkNamespace = networkNamespace; self.maxBodyBytes = maxBodyBytes
            self.resolver = resolver
        }
    }

    /// The outcome, and the round trip from the start of the connect to the complete response.
    public struct Result: Sendable {
        public var outcome: ProbeOutcome
        public var rttMs: Double?
    }

    /// Stops a running check; it then completes with a `cancelled` failure (`.other`).
    public final class Handle: @unchecked Sendable {
        private let readFD: Int32
        private let writeFD: Int32
        private let cancelled = Mutex(false)

        public init() {
            var fds: [Int32] = [-1, -1]
            if pipe(&fds) == 0 {
                _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
                _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            } else {
                fds = [-1, -1]
            }
            readFD = fds[0]; writeFD = fds[1]
        }

        /// The descriptor that becomes readable on `cancel()`.
        var cancelFD: Int32? { readFD >= 0 ? readFD : nil }

        public var isCancelled: Bool { cancelled.withLock { $0 } }

        public func cancel() {
            cancelled.withLock { cancelled in
                guard !cancelled else { return }
                cancelled = true
                var byte: UInt8 = 1
                if writeFD >= 0 { _ = write(writeFD, &byte, 1) }
            }
        }

        deinit {
            if readFD >= 0 { close(readFD) }
            if writeFD >= 0 { close(writeFD) }
        }
    }

    /// The threads checks run on unless given others.
    public static let defaultPool = WorkerPool(name: "reachd-probe", threads: 4, maxQueued: 8, eager: false)

    /// Starts a check on a thread of `pool`; `completion` runs once, on that thread — or at once,
    /// on the caller's, with a failure when the pool cannot take the check.
    @discardableResult
    public static func start(_ request: Request, on pool: WorkerPool = defaultPool,
                             completion: @escaping @Sendable (Result) -> Void) -> Handle {
        let handle = Handle()
        let submitted = pool.submit {
            completion(run(request, handle: handle))
        }
        if !submitted {
            completion(Result(outcome: .failure(ProbeFailure(.other, "no thread free to run the check")), rttMs: nil))
        }
        return handle
    }

    /// Runs a check on the calling thread (blocking up to `request.timeout`).
    public static func run(_ request: Request, handle: Handle = Handle()) -> Result {
        let url = request.url
        if url.isHTTPS {
            return Result(outcome: .failure(ProbeFailure(.unsupported,
                "https is not supported (reachd has no TLS): use an http:// URL")), rttMs: nil)
        }
        let deadline = Date().addingTimeInterval(request.timeout)
        let addresses: [ProbePeer]
        switch resolve(request) {
        case .success(let resolved): addresses = resolved
        case .failure(let failure): return Result(outcome: .failure(failure), rttMs: nil)
        }
        if handle.isCancelled { return Result(outcome: .failure(ProbeFailure(.other, "cancelled")), rttMs: nil) }
        let started = Date()
        var lastFailure = ProbeFailure(.other, "no address to connect to")
        for address in addresses {
            var connection = Connection(request: request, address: address, deadline: deadline, cancelFD: handle.cancelFD)
            defer { connection.close() }
            switch connection.exchange() {
            case .success(let response):
                // To 0.1 ms, as reported: finer digits are noise.
                let rtt = (Date().timeIntervalSince(started) * 10_000).rounded() / 10
                return Result(outcome: .response(response), rttMs: rtt)
            case .failure(let failure):
                // Another address can help when this one refused or has no route; not after a timeout.
                guard failure.kind == .refused || failure.kind == .unreachable else {
                    return Result(outcome: .failure(failure), rttMs: nil)
                }
                lastFailure = failure
            }
        }
        return Result(outcome: .failure(lastFailure), rttMs: nil)
    }
}

extension HTTPProbe {
    /// The URL's host as socket addresses: a literal at once, a name through the resolver
    /// (which gives up after its timeout while a stuck getaddrinfo finishes on its own thread).
    static func resolve(_ request: Request) -> Swift.Result<[ProbePeer], ProbeFailure> {
        let url = request.url
        if let literal = ProbePeer(url.host, port: url.port) { return .success([literal]) }
        let resolver = request.resolver ?? {
            var configuration = HostResolver.Configuration()
            configuration.timeout = request.timeout
            configuration.networkNamespace = request.networkNamespace
            return HostResolver(configuration: configuration)
        }()
        switch resolver.resolve(.name(url.host), host: url.host) {
        case .success(let texts):
            let addresses = texts.compactMap { ProbePeer($0, port: url.port) }
            guard !addresses.isEmpty else { return .failure(ProbeFailure(.dnsFailure, "\(url.host): no usable address")) }
            return .success(addresses)
        case .failure(let error):
            return .failure(ProbeFailure(.dnsFailure, error.description))
        }
    }
}

/// An address the check connects to, with its text for messages.
struct ProbePeer {
    var address: SocketAddress
    var text: String

    init?(_ text: String, port: Int) {
        guard let address = SocketAddress(text, port: port) else { return nil }
        self.address = address
        self.text = text
    }
}

/// One TCP connection of a check: connect, send, read; every step bounded by the deadline.
private struct Connection {
    let request: HTTPProbe.Request
    let address: ProbePeer
    let deadline: Date
    let cancelFD: Int32?
    var fd: Int32 = -1

    init(request: HTTPProbe.Request, address: ProbePeer, deadline: Date, cancelFD: Int32?) {
        self.request = request; self.address = address; self.deadline = deadline; self.cancelFD = cancelFD
    }

    var peer: String {
        address.address.family == AF_INET6 ? "[\(address.text)]:\(request.url.port)" : "\(address.text):\(request.url.port)"
    }

    mutating func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    mutating func exchange() -> Result<HTTPResponse, ProbeFailure> {
        do {
            try open()
            try connect()
            try send(request.url.requestBytes)
            return .success(try receive())
        } catch {
            return .failure(error)
        }
    }

    /// socket(2) inside the namespace, then SO_BINDTODEVICE, or bind(2) to a source address.
    private mutating func open() throws(ProbeFailure) {
        let family = address.address.family
        let created: Int32
        do {
            created = try NetworkNamespace.run(in: request.networkNamespace) {
                socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            }
        } catch {
            throw ProbeFailure(.other, "\(error)")
        }
        guard created >= 0 else { throw failure("socket") }
        fd = created
        guard let interface = request.interface else { return }
        let bound = interface.withCString { name in
            setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, name, socklen_t(strlen(name) + 1))
        }
        if bound == 0 { return }
        let bindErrno = errno
        // Without CAP_NET_RAW SO_BINDTODEVICE fails (EPERM): bind to the interface's address instead.
        guard bindErrno == EPERM || bindErrno == EACCES else { throw failure("SO_BINDTODEVICE \(interface)", bindErrno) }
        for source in request.sourceAddresses {
            guard let local = SocketAddress(source, port: 0), local.family == family else { continue }
            let status = local.withSockaddr { pointer, length in bind(fd, pointer, length) }
            if status == 0 { return }
        }
    }

    /// Non-blocking connect(2), waiting for writability, then SO_ERROR.
    private func connect() throws(ProbeFailure) {
        let status = address.address.withSockaddr { pointer, length in Glibc.connect(fd, pointer, length) }
        if status == 0 { return }
        guard errno == EINPROGRESS else { throw failure("connect to \(peer)") }
        try wait(for: Int16(POLLOUT), doing: "connecting to \(peer)")
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else { throw failure("getsockopt SO_ERROR") }
        if error != 0 { throw failure("connect to \(peer)", error) }
    }

    private func send(_ bytes: [UInt8]) throws(ProbeFailure) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 { offset += sent; continue }
            guard sent < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { throw failure("sending to \(peer)") }
            try wait(for: Int16(POLLOUT), doing: "sending to \(peer)")
        }
    }

    private func receive() throws(ProbeFailure) -> HTTPResponse {
        var parser = HTTPResponseParser(maxBodyBytes: request.maxBodyBytes)
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in recv(fd, raw.baseAddress, raw.count, 0) }
            if count > 0 {
                do {
                    if let response = try parser.feed(buffer[0..<count]) { return response }
                } catch {
                    throw ProbeFailure(.malformed, "\(peer): \(error.description)")
                }
                continue
            }
            if count == 0 || (errno == ECONNRESET) {
                let reset = count < 0
                do {
                    return try parser.finish()
                } catch {
                    if reset { throw failure("reading from \(peer)", ECONNRESET) }
                    throw ProbeFailure(.reset, "\(peer): \(error.description)")
                }
            }
            guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { throw failure("reading from \(peer)") }
            try wait(for: Int16(POLLIN), doing: "waiting for the answer of \(peer)")
        }
    }

    /// poll(2) for `events` on the socket until the deadline; a cancellation ends the wait.
    private func wait(for events: Int16, doing what: String) throws(ProbeFailure) {
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else {
                throw ProbeFailure(.timeout, "timed out \(what) after \(format(request.timeout)) s")
            }
            var fds = [pollfd(fd: fd, events: events, revents: 0)]
            if let cancelFD { fds.append(pollfd(fd: cancelFD, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(remaining * 1000, 60_000).rounded(.up)))
            if ready < 0 {
                guard errno == EINTR else { throw failure("poll") }
                continue
            }
            if fds.count > 1 && fds[1].revents != 0 { throw ProbeFailure(.other, "cancelled") }
            if fds[0].revents != 0 { return }
        }
    }

    /// A failure named after `what` and the errno text, its kind from the errno.
    private func failure(_ what: String, _ code: Int32 = errno) -> ProbeFailure {
        let kind: ProbeFailure.Kind
        switch code {
        case ECONNREFUSED: kind = .refused
        case ETIMEDOUT: kind = .timeout
        case ECONNRESET, EPIPE, ECONNABORTED: kind = .reset
        case ENETUNREACH, EHOSTUNREACH, ENETDOWN, EHOSTDOWN: kind = .unreachable
        default: kind = .other
        }
        return ProbeFailure(kind, "\(what): \(String(cString: strerror(code)))")
    }

    private func format(_ seconds: TimeInterval) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(fixed: seconds, fractionDigits: 1)
    }
}
