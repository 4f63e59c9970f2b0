import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityHost
import ReachabilitySystem

/// The passive link-quality measurement: every `interval`, one sock_diag dump of the TCP
/// sockets of all apps (`SockDiagSocket`, read by `SockDiagReply`), turned into a
/// `QualityDump` by a `PassiveSampleBook`: the sockets that moved data since the previous dump,
/// attributed to the uplink their route leaves by, one vote per user on each uplink.
///
/// Its cost does not grow with other users' sockets: a dump reads at most `socketLimit`
/// (16,384), thinned fairly between the owners when there are more (`SockDiagSelection`); the
/// kernel still lists them all. The records of a dump that read many are freed after it, with
/// the heap's free pages (`malloc_trim`), so one crowd of sockets does not stay resident.
///
/// Everything runs on the sampler's own serial queue: a dump walks the kernel's whole socket
/// table (milliseconds), which must never hold up the monitor. Routes are looked up once per
/// (destination, source, owner, mark) with `RouteLookup` and cached (bounded) until
/// `routesChanged()`; the interfaces' own prefixes are read with them. Errors (no sock_diag in
/// the kernel, a sandbox that forbids the socket) are logged once each and the sampler goes
/// on: the next tick tries again.
///
/// Needs no privilege. Without CAP_NET_ADMIN the kernel does not tell the sockets' firewall
/// marks, so a route chosen by a mark rule (`ip rule add fwmark …`) is looked up as for an
/// unmarked packet.
public final class PassiveQualitySampler: @unchecked Sendable {
    /// Holds the non-copyable socket where a class property can be borrowed mutably.
    private final class SocketBox {
        var socket: SockDiagSocket
        init(_ socket: consuming SockDiagSocket) { self.socket = socket }
    }

    private let queue: DispatchQueue
    private let networkNamespace: String?
    private let log: LogSink
    private let clock: ReachdClock
    private let routeCacheLimit: Int
    private let handler: @Sendable (QualityDump) -> Void

    // Confined to `queue`.
    private var diag: SocketBox?
    private var routes: RouteLookup?
    private var buffer: UnsafeMutableRawBufferPointer?
    private var records: [SockDiagRecord] = []
    private var book = PassiveSampleBook()
    private var selection: SockDiagSelection
    /// The last complete dump: sockets the kernel listed, and those read.
    private var lastCounts = (listed: 0, read: 0)
    /// The uplink of each route query; -1 for none (local, refused). Emptied on route changes.
    private var routeCache: [SockDiagRouteQuery: Int] = [:]
    private var prefixes: [Int: [InterfacePrefix]]?
    /// When the caches were filled (uptime): they are dropped after `cacheLifetime` even
    /// without a route change, in case one was missed.
    private var cachesSince: TimeInterval = 0
    private var timer: DispatchSourceTimer?
    /// Errors already logged; emptied by a dump that succeeds, so a new failure is told again.
    private var reported: Set<String> = []

    /// The largest datagram the kernel builds for a dump is 32 KiB; twice that never truncates.
    static let bufferSize = 64 * 1024
    static let cacheLifetime: TimeInterval = 300
    /// A dump that read more sockets than this frees its records after it and trims the heap
    /// (the records of 16,384 sockets are about 3 MiB).
    static let largeDump = 2048

    /// - Parameters:
    ///   - networkNamespace: where the sockets are dumped and routes looked up (tests); nil:
    ///     the process's own namespace.
    ///   - log: where errors are told, once each.
    ///   - clock: the uptime of each dump (`QualityDump.uptime`, `interval`).
    ///   - routeCacheLimit: the most route look-ups kept; beyond, the cache starts afresh.
    ///   - socketLimit: the most sockets a dump reads (`SockDiagSelection`).
    ///   - handler: gets every dump made by the timer (`start(interval:)`), the first one
    ///     (which only learns the counters) included, on the sampler's queue.
    public init(networkNamespace: String? = nil, log: LogSink = .discarding, clock: ReachdClock = .system,
                routeCacheLimit: Int = 4096, socketLimit: Int = SockDiagSelection.defaultLimit,
                queue: DispatchQueue = DispatchQueue(label: "reachd.sockdiag"),
                handler: @escaping @Sendable (QualityDump) -> Void = { _ in }) {
        self.networkNamespace = networkNamespace; self.log = log; self.clock = clock
        selection = SockDiagSelection(limit: socketLimit)
        self.routeCacheLimit = max(1, routeCacheLimit); self.queue = queue; self.handler = handler
    }

    deinit {
        timer?.cancel()
        buffer?.deallocate()
    }

    /// Starts dumping: one dump now (it learns the counters), then one every `interval`
    /// seconds. Starting again changes the interval. The dumps after a `stop()` start afresh.
    public func start(interval: TimeInterval) {
        queue.async { [self] in
            timer?.cancel()
            let source = DispatchSource.makeTimerSource(queue: queue)
            let period = max(interval, 0.01)
            source.schedule(deadline: .now(), repeating: period, leeway: .milliseconds(Int(min(period * 100, 1000))))
            source.setEventHandler { [weak self] in
                guard let self, let dump = self.pass() else { return }
                self.handler(dump)
            }
            timer = source
            source.resume()
        }
    }

    /// Stops dumping, forgets the counters and frees the socket, its buffer and the caches.
    /// For sleep: the first dump after `start` again only learns the counters.
    public func stop() {
        queue.async { [self] in
            timer?.cancel()
            timer = nil
            book.reset()
            selection.forget()
            diag = nil
            routes = nil
            buffer?.deallocate()
            buffer = nil
            records = []
            routeCache = [:]
            prefixes = nil
        }
    }

    /// The routes or addresses changed: the next dump looks every route up again.
    public func routesChanged() {
        queue.async { [self] in
            routeCache.removeAll(keepingCapacity: true)
            prefixes = nil
        }
    }

    /// Makes one dump now, on the sampler's queue, and returns it (tests, benchmarks; not
    /// handed to the handler). nil when the dump failed (the error is logged). Must not be
    /// called from the handler.
    public func sampleNow() -> QualityDump? {
        queue.sync { pass() }
    }

    /// How many sockets the counters are kept for, route look-ups cached, interfaces whose
    /// prefixes are known (tests, benchmarks).
    public var cacheSizes: (sockets: Int, routes: Int, interfaces: Int) {
        queue.sync { (book.trackedSockets, routeCache.count, prefixes?.count ?? 0) }
    }

    /// The last complete dump: the sockets the kernel listed, and those read (benchmarks, tests).
    public var lastDumpSockets: (listed: Int, read: Int) {
        queue.sync { lastCounts }
    }

    // MARK: - On the queue

    /// One dump of both families, through the book.
    private func pass() -> QualityDump? {
        guard let diag = openSocket(), let buffer = takeBuffer() else { return nil }
        records.removeAll(keepingCapacity: true)
        // About as many as the last dump read: no copies while the array grows.
        if records.capacity < lastCounts.read { records.reserveCapacity(min(lastCounts.read + lastCounts.read / 16 + 64, selection.limit)) }
        defer { releaseIfLarge() }
        var complete = true
        for family in [IPAddress.Family.ipv4, .ipv6] {
            var failure: SockDiagError?
            do {
                try diag.socket.dumpTCP(family: family, buffer: buffer) { datagram, sequence in
                    do throws(SockDiagError) {
                        return try SockDiagReply.parse(datagram, sequence: sequence, selection: &selection, into: &records).done
                    } catch {
                        failure = error
                        return true
                    }
                }
            } catch {
                // The socket failed (a timeout, EMSGSIZE): its state is unknown; open a new one.
                report("dump", "passive quality: sock_diag dump (\(family == .ipv4 ? "IPv4" : "IPv6")): \(error)")
                self.diag = nil
                selection.abandon()
                return nil
            }
            switch failure {
            case nil:
                break
            case .kernel(let errno)?:
                // ENOENT: no inet_diag for this family (IPv6 disabled): the other one still counts.
                report("kernel\(errno)", "passive quality: the kernel refused the sock_diag dump (\(family == .ipv4 ? "IPv4" : "IPv6")): \(Errno(errno, call: "sock_diag").text)")
            case .malformed?, .overrun?:
                report("reply", "passive quality: \(failure.map(String.init(describing:)) ?? "")")
                complete = false
                self.diag = nil   // the rest of that reply may still be queued
            }
        }
        // A dump with a family missing would make its sockets look vanished, then new.
        guard complete else {
            selection.abandon()
            return nil
        }
        let now = clock.now().uptime
        if now - cachesSince > Self.cacheLifetime || now < cachesSince {
            routeCache.removeAll(keepingCapacity: true)
            prefixes = nil
        }
        if prefixes == nil { prefixes = readPrefixes(); cachesSince = now }
        let dump = book.record(records, uptime: now, ownPrefixes: prefixes ?? [:], uplink: uplink,
                               readBefore: { [selection] uid, cookie in selection.readBefore(uid: uid, cookie: cookie) })
        lastCounts = (selection.seen, selection.admitted)
        selection.finish()
        reported.remove("dump"); reported.remove("reply")
        return dump
    }

    /// After a dump that read many sockets: its records go, and the heap's free pages with them.
    private func releaseIfLarge() {
        guard records.capacity > Self.largeDump else {
            records.removeAll(keepingCapacity: true)
            return
        }
        records = []
        ProcessSetup.trimMemory()
    }

    private func openSocket() -> SocketBox? {
        if let diag { return diag }
        do {
            let socket = try NetworkNamespace.run(in: networkNamespace) { () throws -> SockDiagSocket in try SockDiagSocket() }
            let box = SocketBox(socket)
            diag = box
            reported.remove("socket")
            return box
        } catch {
            report("socket", "passive quality: cannot open the sock_diag socket: \(error)")
            return nil
        }
    }

    private func takeBuffer() -> UnsafeMutableRawBufferPointer? {
        if let buffer { return buffer }
        let fresh = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 8)
        buffer = fresh
        return fresh
    }

    private func routeLookup() -> RouteLookup? {
        if let routes { return routes }
        do {
            let lookup = try RouteLookup(networkNamespace: networkNamespace)
            routes = lookup
            return lookup
        } catch {
            report("routes", "passive quality: cannot open the route look-up: \(error)")
            return nil
        }
    }

    private func readPrefixes() -> [Int: [InterfacePrefix]]? {
        guard let lookup = routeLookup() else { return nil }
        do {
            return try lookup.interfacePrefixes()
        } catch {
            report("prefixes", "passive quality: cannot read the interfaces' addresses: \(error)")
            routes = nil
            return nil
        }
    }

    /// The uplink of a socket's route, cached.
    private func uplink(_ query: SockDiagRouteQuery) -> Int? {
        if let cached = routeCache[query] { return cached >= 0 ? cached : nil }
        guard let lookup = routeLookup(),
              let destination = IPAddress(bytes: query.destination.bytes(query.family)),
              let source = IPAddress(bytes: query.source.bytes(query.family)) else { return nil }
        let index: Int
        do {
            let route = try lookup.lookup(destination.description, uid: query.uid, mark: query.mark,
                                          source: query.source.isUnspecified ? nil : source.description, resolveLink: false)
            switch route.type {
            case .unicast: index = route.outputInterfaceIndex ?? -1
            case .local, .broadcast, .anycast, .multicast, .blackhole, .unreachable, .prohibit, .throwRoute, .other: index = -1
            }
        } catch {
            // The socket failed, not the route: not cached, asked again next time.
            report("lookup", "passive quality: route look-up: \(error)")
            routes = nil
            return nil
        }
        if routeCache.count >= routeCacheLimit { routeCache.removeAll(keepingCapacity: true) }
        routeCache[query] = index
        return index >= 0 ? index : nil
    }

    private func report(_ key: String, _ message: @autoclosure () -> String) {
        guard reported.insert(key).inserted else { return }
        log.warning(message())
    }
}
