import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem
import Synchronization

/// One HTTP/1.1 GET (over TLS for https) on a socket bound to an interface: the connectivity check.
///
/// FoundationNetworking's URLSession cannot bind to an interface and mishandles relative
/// redirects, so this speaks HTTP itself: resolve (with a deadline, see
/// `HostResolver`), a non-blocking socket with SO_BINDTODEVICE on the primary interface (or bound
/// to one of its addresses where that is not permitted), connect, send the request, read the
/// response until it is complete, closed or the deadline passes. Redirects are not followed:
/// a redirect is what a captive portal looks like. `Timeout=` covers everything, DNS and the TLS
/// handshake included. https speaks TLS through OpenSSL (`TLSSession`), the certificate verified.
///
/// Each check runs on a thread of a `WorkerPool` made in advance (the connectivity checker's
/// own, which no `Check` flood can take) and reports with a completion on that thread, so a
/// hanging server or resolver never blocks the monitor's queue or the next check.
public enum HTTPProbe {
    public struct Request: Sendable {
        public var url: ProbeURL
        /// The interface to bind to (SO_BINDTODEVICE); nil: let the routing table choose.
        public var interface: String?
        /// The interface's index: when given, the socket is bound by it (SO_BINDTOIFINDEX)
        /// instead of by `interface`, whose text may not be the kernel's bytes.
        public var interfaceIndex: Int?
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
        /// PEM certificates trusted for https besides the system's store (`CAFile=`).
        public var caFile: String?
        /// The TLS context https uses (the checker's, shared by its checks); nil: one is built
        /// for this request from `caFile`.
        public var tls: TLSContext?
        /// The `Accept:` header, if any (`application/captive+json` for a captive-portal API).
        public var accept: String?
        /// Check this family alone: its addresses asked of the resolver (getaddrinfo with
        /// AF_INET or AF_INET6) and connected to; nil: every address the resolver gives.
        public var family: AddressFamily?
        /// What the deadline and the round trip are measured with (its boot time: a step of the
        /// wall clock neither ends a check early nor lets it hang).
        public var clock: ReachdClock = .system

        public init(url: ProbeURL, interface: String? = nil, sourceAddresses: [String] = [], timeout: TimeInterval = 5,
                    networkNamespace: String? = nil, maxBodyBytes: Int = 64 * 1024, resolver: HostResolver? = nil,
                    interfaceIndex: Int? = nil, caFile: String? = nil, accept: String? = nil, tls: TLSContext? = nil,
                    family: AddressFamily? = nil) {
            self.url = url; self.interface = interface; self.interfaceIndex = interfaceIndex; self.sourceAddresses = sourceAddresses
            self.timeout = timeout; self.networkNamespace = networkNamespace; self.maxBodyBytes = maxBodyBytes
            self.resolver = resolver; self.caFile = caFile; self.accept = accept; self.tls = tls; self.family = family
        }

        /// This request for `family` alone, the source addresses narrowed to that family; with
        /// `way`, bound to that interface instead (the family's own way out).
        public func only(_ family: AddressFamily, via way: ProbePath.Way? = nil) -> Request {
            var request = self
            request.family = family
            if let way {
                request.interface = way.interface
                request.interfaceIndex = way.index
                request.sourceAddresses = way.addresses.map { $0.split(separator: "/", maxSplits: 1).first.map(String.init) ?? $0 }
            }
            request.sourceAddresses = request.sourceAddresses.filter { HostResolver.isFamily(family.socketFamily, $0) }
            return request
        }
    }

    /// The outcome, and the round trip from the start of the connect to the complete response.
    public struct Result: Sendable {
        public var outcome: ProbeOutcome
        public var rttMs: Double?
        /// The address that answered, when one did.
        public var address: String? = nil
    }

    /// Stops a running check; it then completes with a `cancelled` failure (`.other`).
    public final class Handle: @unchecked Sendable {
        /// Readable once cancelled; nil when no pipe could be made (the check then runs on).
        /// Set once, in `init` (a `var`: optional chaining on a non-copyable `let` would consume it).
        private var pipe: FileDescriptor.Pipe?
        private let cancelled = Mutex(false)

        public init() {
            pipe = try? FileDescriptor.Pipe()
        }

        /// The descriptor that becomes readable on `cancel()`.
        var cancelFD: Int32? { pipe?.readEnd.rawValue }

        public var isCancelled: Bool { cancelled.withLock { $0 } }

        public func cancel() {
            cancelled.withLock { cancelled in
                guard !cancelled else { return }
                cancelled = true
                let byte: UInt8 = 1
                _ = withUnsafeBytes(of: byte) { try? pipe?.writeEnd.write($0) }
            }
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
        let deadline = request.clock.now().uptime + request.timeout
        return finish(request, resolve(request), deadline: deadline, handle: handle)
    }

    /// Runs a check that waits for no other thread: an address literal's connection on the
    /// calling thread (a thread of `pool`); a host name is resolved on the resolver's threads
    /// (`HostResolver.resolve(_:host:family:completion:)`), and the check goes on on a thread
    /// of `pool`. `completion` runs once, on a thread of `pool` — or with nil, on another, when
    /// `pool` could take no more (then no check was made: a full pool is no verdict).
    static func run(_ request: Request, handle: Handle, continuingOn pool: WorkerPool,
                    completion: @escaping @Sendable (Result?) -> Void) {
        let deadline = request.clock.now().uptime + request.timeout
        if let literal = literal(request) { return completion(finish(request, literal, deadline: deadline, handle: handle)) }
        let host = request.url.host, port = UInt16(truncatingIfNeeded: request.url.port)
        resolver(for: request).resolve(.name(host), host: host, family: request.family?.socketFamily) { resolved in
            let addresses = Self.addresses(resolved, host: host, port: port)
            let submitted = pool.submit { completion(finish(request, addresses, deadline: deadline, handle: handle)) }
            if !submitted { completion(nil) }
        }
    }

    /// The check once the host is resolved (or not): the connection, until `deadline`.
    private static func finish(_ request: Request, _ resolved: Swift.Result<[SocketAddress], ProbeFailure>,
                               deadline: TimeInterval, handle: Handle) -> Result {
        let addresses: [SocketAddress]
        switch resolved {
        case .success(let found): addresses = found
        case .failure(let failure): return Result(outcome: .failure(failure), rttMs: nil)
        }
        // Noticed before the TLS set-up, the dearest step before the connection.
        if handle.isCancelled { return Result(outcome: .failure(ProbeFailure(.other, "cancelled")), rttMs: nil) }
        let tls: TLSContext?
        if !request.url.isHTTPS {
            tls = nil
        } else if let shared = request.tls {
            tls = shared
        } else {
            do throws(ProbeFailure) {
                tls = try TLSContext(caFile: request.caFile)
            } catch {
                return Result(outcome: .failure(error), rttMs: nil)
            }
        }
        let started = request.clock.now().uptime
        var lastFailure = ProbeFailure(.other, "no address to connect to")
        for address in addresses {
            let exchange: Swift.Result<HTTPResponse, ProbeFailure>
            do {
                // Closed at the end of this iteration.
                if handle.isCancelled { return Result(outcome: .failure(ProbeFailure(.other, "cancelled")), rttMs: nil) }
                let connection = try Connection(request: request, address: address, deadline: deadline, cancelFD: handle.cancelFD,
                                                tls: tls)
                exchange = connection.exchange()
            } catch {
                exchange = .failure(error.at(.connect))
            }
            switch exchange {
            case .success(let response):
                // To 0.1 ms, as reported: finer digits are noise.
                let rtt = ((request.clock.now().uptime - started) * 10_000).rounded() / 10
                var result = Result(outcome: .response(response), rttMs: rtt)
                if case .ip(let ip, _) = address.kind { result.address = ip.description }
                return result
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
    static func resolve(_ request: Request) -> Swift.Result<[SocketAddress], ProbeFailure> {
        if let literal = literal(request) { return literal }
        let url = request.url
        let resolver = resolver(for: request)
        let resolved = request.family.map { resolver.resolve(.name(url.host), host: url.host, family: $0.socketFamily) }
            ?? resolver.resolve(.name(url.host), host: url.host)
        return addresses(resolved, host: url.host, port: UInt16(truncatingIfNeeded: url.port))
    }

    /// The URL's host when it is an address literal (a failure when it is not of the request's
    /// family); nil: a name, for the resolver.
    private static func literal(_ request: Request) -> Swift.Result<[SocketAddress], ProbeFailure>? {
        let url = request.url
        guard let literal = SocketAddress(ip: url.host, port: UInt16(truncatingIfNeeded: url.port)) else { return nil }
        if let family = request.family, !HostResolver.isFamily(family.socketFamily, url.host) {
            return .failure(ProbeFailure(.dnsFailure, "\(url.host) is no \(family.displayName) address", stage: .resolve))
        }
        return .success([literal])
    }

    /// The request's resolver, or one made for it.
    private static func resolver(for request: Request) -> HostResolver {
        request.resolver ?? {
            var configuration = HostResolver.Configuration()
            configuration.timeout = request.timeout
            configuration.networkNamespace = request.networkNamespace
            return HostResolver(configuration: configuration)
        }()
    }

    /// What the resolver found for `host`, as socket addresses on `port`.
    private static func addresses(_ resolved: Swift.Result<[String], HostCheckError>, host: String,
                                  port: UInt16) -> Swift.Result<[SocketAddress], ProbeFailure> {
        switch resolved {
        case .success(let texts):
            let addresses = texts.compactMap { SocketAddress(ip: $0, port: port) }
            guard !addresses.isEmpty else {
                return .failure(ProbeFailure(.dnsFailure, "\(host): no usable address", stage: .resolve))
            }
            return .success(addresses)
        case .failure(let error):
            return .failure(ProbeFailure(.dnsFailure, error.description, stage: .resolve))
        }
    }
}

/// One TCP connection of a check: connect, send, read; every step bounded by the deadline.
private struct Connection: ~Copyable {
    let request: HTTPProbe.Request
    let address: SocketAddress
    /// Seconds of boot time (`ReachdClock.bootTimeSeconds()`).
    let deadline: TimeInterval
    let cancelFD: Int32?
    let socket: FileDescriptor
    /// The TLS session of an https URL, made once connected.
    let tls: TLSSession?

    /// socket(2) inside the namespace, then SO_BINDTODEVICE, or bind(2) to a source address.
    init(request: HTTPProbe.Request, address: SocketAddress, deadline: TimeInterval, cancelFD: Int32?,
         tls context: TLSContext?) throws(ProbeFailure) {
        self.request = request; self.address = address; self.deadline = deadline; self.cancelFD = cancelFD
        let opened = try Self.open(request, to: address)
        // Made before the socket is stored: a failure closes the local socket, not half of self.
        var session: TLSSession?
        if let context { session = try TLSSession(fd: opened.rawValue, host: request.url.host, context: context) }
        socket = opened
        tls = session
    }

    private static func open(_ request: HTTPProbe.Request, to peer: SocketAddress) throws(ProbeFailure) -> FileDescriptor {
        let socket: FileDescriptor
        do {
            socket = try NetworkNamespace.run(in: request.networkNamespace) { () throws -> FileDescriptor in
                try FileDescriptor.socket(for: peer, nonBlocking: true)
            }
        } catch let error as Errno {
            throw failure("socket", error)
        } catch {
            throw ProbeFailure(.other, "\(error)")
        }
        guard let interface = request.interface else { return socket }
        do {
            if let index = request.interfaceIndex { try socket.bindToInterface(index: index) } else { try socket.bindToDevice(interface) }
            return socket
        } catch {
            // Without CAP_NET_RAW binding to a device fails (EPERM): bind to the interface's address instead.
            guard error == .notPermitted || error == .permissionDenied else {
                throw failure("binding to \(TerminalText.escaped(interface))", error)
            }
        }
        for source in request.sourceAddresses {
            guard let local = SocketAddress(ip: source, port: 0), local.family == peer.family else { continue }
            if (try? socket.bind(to: local)) != nil { break }
        }
        return socket
    }

    /// `192.0.2.1:80`, `[2001:db8::1]:80`, for messages.
    var peer: String { address.description }

    func exchange() -> Result<HTTPResponse, ProbeFailure> {
        // Each step names itself: a timeout while connecting is not one while waiting for the answer.
        var stage = ProbeStage.connect
        do {
            try connect()
            if let tls {
                stage = .tls
                try handshake(tls)
            }
            stage = .request
            try send(request.url.requestBytes(accept: request.accept))
            return .success(try receive())
        } catch {
            return .failure(error.at(stage))
        }
    }

    /// The TLS handshake, waiting for the socket as OpenSSL asks, until the deadline.
    private func handshake(_ tls: TLSSession) throws(ProbeFailure) {
        while true {
            switch try tls.handshake() {
            case .done: return
            case .wantRead: try wait(for: .readable, doing: "the TLS handshake with \(peer)")
            case .wantWrite: try wait(for: .writable, doing: "the TLS handshake with \(peer)")
            case .closed: throw ProbeFailure(.tls, "TLS handshake with \(peer): connection closed by the server")
            }
        }
    }

    /// Non-blocking connect(2), waiting for writability, then SO_ERROR.
    private func connect() throws(ProbeFailure) {
        do {
            try socket.connect(to: address)
            return
        } catch where error == .inProgress {
        } catch {
            throw Self.failure("connect to \(peer)", error)
        }
        try wait(for: .writable, doing: "connecting to \(peer)")
        let pending: Errno?
        do { pending = try socket.pendingError() } catch { throw Self.failure("getsockopt SO_ERROR", error) }
        if let pending { throw Self.failure("connect to \(peer)", pending) }
    }

    private func send(_ bytes: [UInt8]) throws(ProbeFailure) {
        var offset = 0
        if let tls {
            while offset < bytes.count {
                let step: Result<TLSSession.Step, ProbeFailure> = bytes[offset...].withUnsafeBytes { raw in
                    Result { () throws(ProbeFailure) in try tls.write(raw) }
                }
                switch try step.get() {
                case .done(let count): offset += count
                case .wantRead: try wait(for: .readable, doing: "sending to \(peer)")
                case .wantWrite: try wait(for: .writable, doing: "sending to \(peer)")
                case .closed: throw ProbeFailure(.reset, "\(peer): connection closed while sending")
                }
            }
            return
        }
        while offset < bytes.count {
            let sent: Result<Int, Errno> = bytes[offset...].withUnsafeBytes { raw in
                Result { () throws(Errno) in try socket.send(raw) }
            }
            switch sent {
            case .success(let count) where count > 0: offset += count
            case .success: throw Self.failure("sending to \(peer)", .ioError)
            case .failure(let error) where error.isWouldBlock: try wait(for: .writable, doing: "sending to \(peer)")
            case .failure(let error): throw Self.failure("sending to \(peer)", error)
            }
        }
    }

    private func receive() throws(ProbeFailure) -> HTTPResponse {
        var parser = HTTPResponseParser(maxBodyBytes: request.maxBodyBytes)
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while let tls {
            let step: Result<TLSSession.Step, ProbeFailure> = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(ProbeFailure) in try tls.read(into: raw) }
            }
            switch try step.get() {
            case .done(let count):
                do {
                    if let response = try parser.feed(buffer[0..<count]) { return response }
                } catch {
                    throw ProbeFailure(.malformed, "\(peer): \(error.description)")
                }
            case .wantRead: try wait(for: .readable, doing: "waiting for the answer of \(peer)")
            case .wantWrite: try wait(for: .writable, doing: "waiting for the answer of \(peer)")
            case .closed:
                do {
                    return try parser.finish()
                } catch {
                    throw ProbeFailure(.reset, "\(peer): \(error.description)")
                }
            }
        }
        while true {
            let received: Result<Int, Errno> = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in try socket.receive(into: raw) }
            }
            switch received {
            case .success(let count) where count > 0:
                do {
                    if let response = try parser.feed(buffer[0..<count]) { return response }
                } catch {
                    throw ProbeFailure(.malformed, "\(peer): \(error.description)")
                }
            case .success, .failure(.connectionReset):
                let reset = received != .success(0)
                do {
                    return try parser.finish()
                } catch {
                    if reset { throw Self.failure("reading from \(peer)", .connectionReset) }
                    throw ProbeFailure(.reset, "\(peer): \(error.description)")
                }
            case .failure(let error) where error.isWouldBlock:
                try wait(for: .readable, doing: "waiting for the answer of \(peer)")
            case .failure(let error):
                throw Self.failure("reading from \(peer)", error)
            }
        }
    }

    /// poll(2) for `event` on the socket until the deadline; a cancellation ends the wait.
    private func wait(for event: FileDescriptor.PollEvent, doing what: String) throws(ProbeFailure) {
        while true {
            let remaining = deadline - request.clock.now().uptime
            guard remaining > 0 else {
                throw ProbeFailure(.timeout, "timed out \(what) after \(format(request.timeout)) s")
            }
            let result: FileDescriptor.PollResult
            do {
                result = try socket.poll(for: event, cancelledBy: cancelFD,
                                         timeoutMilliseconds: Int32(min(remaining * 1000, 60_000).rounded(.up)))
            } catch {
                throw Self.failure("poll", error)
            }
            switch result {
            case .ready: return
            case .cancelled: throw ProbeFailure(.other, "cancelled")
            case .pending: continue
            }
        }
    }

    /// A failure named after `what` and the errno text, its kind from the errno.
    private static func failure(_ what: String, _ error: Errno) -> ProbeFailure {
        let kind: ProbeFailure.Kind
        switch error {
        case .connectionRefused: kind = .refused
        case .timedOut: kind = .timeout
        case .connectionReset, .brokenPipe, .connectionAborted: kind = .reset
        case .networkUnreachable, .hostUnreachable, .networkDown, .hostDown: kind = .unreachable
        default: kind = .other
        }
        return ProbeFailure(kind, "\(what): \(error.text)")
    }

    private func format(_ seconds: TimeInterval) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(fixed: seconds, fractionDigits: 1)
    }
}
