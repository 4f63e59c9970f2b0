import CNetlink
import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Resolves host names to every address they have, with a timeout.
///
/// `getaddrinfo(3)` cannot be cancelled and may hang for as long as the system's resolver
/// configuration allows, so each resolution runs on a thread of a bounded `WorkerPool`:
/// the caller waits at most `timeout`, then answers HostNotFound while the stuck thread finishes
/// on its own. Address literals never reach the resolver. At most `maxInFlight` resolutions run
/// at once (stuck ones included), and a pool that cannot take one more answers at once, so
/// hanging DNS or a flood of callers can neither pile up threads nor wedge a caller.
public final class HostResolver: @unchecked Sendable {
    /// The resolving function: a name in, its addresses (in the resolver's preference order) or
    /// an error text out. Tests substitute one that hangs or fails.
    public typealias Lookup = @Sendable (_ name: String) -> Result<[String], ResolveFailure>

    /// Why a name did not resolve: the resolver's text (`Name or service not known`).
    public struct ResolveFailure: Error, Equatable, Sendable, CustomStringConvertible {
        public let message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    public struct Configuration: Sendable {
        /// How long a caller waits for one name.
        public var timeout: TimeInterval = 5
        /// Resolve from this hosts(5) file only, never from DNS (tests: a hosts file made for the test).
        public var hostsFile: String? = nil
        /// The network namespace in which `getaddrinfo` creates its sockets (tests).
        public var networkNamespace: String? = nil
        /// The most resolutions running at once.
        public var maxInFlight: Int = 16
        public init() {}
    }

    public let configuration: Configuration
    private let lookup: Lookup
    /// The lookup of one family's addresses (`AF_INET`, `AF_INET6`): getaddrinfo asked for that
    /// family alone, so a resolver that answers A but not AAAA fails only the IPv6 check.
    private let familyLookup: @Sendable (_ name: String, _ family: Int32) -> Result<[String], ResolveFailure>
    private let pool: WorkerPool
    /// Resolutions running now.
    private let inFlight = Mutex(0)

    /// - Parameters:
    ///   - lookup: the resolving function; by default `hostsFile` when set, else `getaddrinfo`.
    ///   - pool: the threads resolutions run on.
    public init(configuration: Configuration = Configuration(), lookup: Lookup? = nil, pool: WorkerPool = .lookups) {
        self.configuration = configuration
        self.pool = pool
        if let lookup {
            self.lookup = lookup
            familyLookup = { name, family in Self.only(family, lookup(name)) }
        } else if let hostsFile = configuration.hostsFile {
            self.lookup = { name in HostsFile.addresses(of: name, path: hostsFile) }
            familyLookup = { name, family in Self.only(family, HostsFile.addresses(of: name, path: hostsFile)) }
        } else {
            let namespace = configuration.networkNamespace
            self.lookup = { name in
                do { return try NetworkNamespace.run(in: namespace) { HostResolver.getaddrinfo(name) } }
                catch { return .failure(ResolveFailure("\(error)")) }
            }
            familyLookup = { name, family in
                do { return try NetworkNamespace.run(in: namespace) { HostResolver.getaddrinfo(name, family: family) } }
                catch { return .failure(ResolveFailure("\(error)")) }
            }
        }
    }

    /// The addresses of `spec`: the literal itself, or every address of the name, duplicates
    /// removed, in the resolver's order. Blocks the calling thread for at most `timeout`.
    public func resolve(_ spec: HostSpec, host: String) -> Result<[String], HostCheckError> {
        resolve(spec, host: host, using: lookup)
    }

    /// As `resolve`, asking for the addresses of one family (`AF_INET`, `AF_INET6`) only; a
    /// literal of the other family resolves to nothing.
    public func resolve(_ spec: HostSpec, host: String, family: Int32) -> Result<[String], HostCheckError> {
        if case let .address(address, _) = spec {
            guard Self.isFamily(family, address) else { return .failure(.hostNotFound(host: host, reason: "no addresses")) }
            return .success([address])
        }
        let familyLookup = self.familyLookup
        return resolve(spec, host: host, using: { name in familyLookup(name, family) })
    }

    private func resolve(_ spec: HostSpec, host: String, using lookup: @escaping Lookup) -> Result<[String], HostCheckError> {
        switch spec {
        case let .address(address, _):
            return .success([address])
        case let .name(name):
            let maxInFlight = configuration.maxInFlight
            let admitted: Bool = inFlight.withLock { inFlight in
                guard inFlight < maxInFlight else { return false }
                inFlight += 1
                return true
            }
            guard admitted else {
                return .failure(.hostNotFound(host: host, reason: "too many resolutions in progress"))
            }
            let box = SharedMutex<Result<[String], ResolveFailure>?>(nil)
            let done = DispatchSemaphore(value: 0)
            let submitted = pool.submit { [self] in
                let result = lookup(name)
                box.withLock { $0 = result }
                inFlight.withLock { $0 -= 1 }
                done.signal()
            }
            guard submitted else {
                inFlight.withLock { $0 -= 1 }
                return .failure(.busy(reason: "no resolver thread free"))
            }
            let timeout = configuration.timeout
            guard done.wait(timeout: .now() + timeout) == .success, let result = box.withLock({ $0 }) else {
                return .failure(.hostNotFound(host: host, reason: "resolution timed out after \(Self.seconds(timeout))"))
            }
            return Self.addresses(result, host: host)
        }
    }

    /// As `resolve` (of `family` alone when given), without waiting for anything: `completion`
    /// runs once, with the addresses on the pool thread that found them, or with the time-out's
    /// failure on a Dispatch thread when `timeout` passes first (the stuck look-up finishes on
    /// its own and is ignored). A literal, or a look-up the pool cannot take, answers at once on
    /// the calling thread. The connectivity check resolves this way: its thread never sits
    /// waiting for another one.
    public func resolve(_ spec: HostSpec, host: String, family: Int32?,
                        completion: @escaping @Sendable (Result<[String], HostCheckError>) -> Void) {
        let name: String
        switch spec {
        case let .address(address, _):
            if let family, !Self.isFamily(family, address) {
                return completion(.failure(.hostNotFound(host: host, reason: "no addresses")))
            }
            return completion(.success([address]))
        case let .name(named):
            name = named
        }
        let lookup: Lookup
        if let family {
            let familyLookup = self.familyLookup
            lookup = { familyLookup($0, family) }
        } else {
            lookup = self.lookup
        }
        let maxInFlight = configuration.maxInFlight
        let admitted: Bool = inFlight.withLock { inFlight in
            guard inFlight < maxInFlight else { return false }
            inFlight += 1
            return true
        }
        guard admitted else {
            return completion(.failure(.hostNotFound(host: host, reason: "too many resolutions in progress")))
        }
        // Whichever comes first, the answer or the time-out, completes; the other finds it done.
        let answered = SharedMutex(false)
        let claim: @Sendable () -> Bool = {
            answered.withLock { done in
                defer { done = true }
                return !done
            }
        }
        let submitted = pool.submit { [self] in
            let result = lookup(name)
            inFlight.withLock { $0 -= 1 }
            guard claim() else { return }
            completion(Self.addresses(result, host: host))
        }
        guard submitted else {
            inFlight.withLock { $0 -= 1 }
            return completion(.failure(.busy(reason: "no resolver thread free")))
        }
        let timeout = configuration.timeout
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
            guard claim() else { return }
            completion(.failure(.hostNotFound(host: host, reason: "resolution timed out after \(Self.seconds(timeout))")))
        }
    }

    /// As `resolve`, on the calling thread and without a timeout: for a caller that already runs
    /// on a pool thread and bounds the wait itself (`HostChecker`).
    func resolveHere(_ spec: HostSpec, host: String) -> Result<[String], HostCheckError> {
        switch spec {
        case let .address(address, _):
            return .success([address])
        case let .name(name):
            return Self.addresses(lookup(name), host: host)
        }
    }

    private static func addresses(_ result: Result<[String], ResolveFailure>, host: String) -> Result<[String], HostCheckError> {
        switch result {
        case let .success(addresses):
            var unique: [String] = []
            for address in addresses where !unique.contains(address) { unique.append(address) }
            if unique.isEmpty { return .failure(.hostNotFound(host: host, reason: "no addresses")) }
            return .success(unique)
        case let .failure(failure):
            return .failure(.hostNotFound(host: host, reason: failure.message))
        }
    }

    /// `5 s`, `0.25 s`: a duration for messages, to the millisecond.
    static func seconds(_ t: TimeInterval) -> String {
        let ms = (t * 1000).rounded()
        return ms.truncatingRemainder(dividingBy: 1000) == 0 ? "\(Int(ms / 1000)) s" : "\(ms / 1000) s"
    }

    /// The addresses of `family` in `result`.
    private static func only(_ family: Int32, _ result: Result<[String], ResolveFailure>) -> Result<[String], ResolveFailure> {
        result.map { $0.filter { isFamily(family, $0) } }
    }

    /// True when `address` (text) is of `family`.
    static func isFamily(_ family: Int32, _ address: String) -> Bool {
        family == AF_INET6 ? HostName.ipv6Bytes(address) != nil : HostName.ipv4Bytes(address) != nil
    }

    /// `getaddrinfo(name, NULL, {family, SOCK_STREAM})`: every address (of `family`; `AF_UNSPEC`:
    /// both), in RFC 6724 order.
    static func getaddrinfo(_ name: String, family: Int32 = AF_UNSPEC) -> Result<[String], ResolveFailure> {
        var hints = addrinfo()
        hints.ai_family = family
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = Glibc.getaddrinfo(name, nil, &hints, &list)
        guard rc == 0 else {
            let text = rc == EAI_SYSTEM ? Errno.current("getaddrinfo").text : String(cString: gai_strerror(rc))
            return .failure(ResolveFailure(text))
        }
        defer { freeaddrinfo(list) }
        var addresses: [String] = []
        var entry = list
        while let current = entry {
            if let address = current.pointee.ai_addr, let text = socketAddressString(address) { addresses.append(text) }
            entry = current.pointee.ai_next
        }
        return .success(addresses)
    }

    /// The numeric form of an AF_INET/AF_INET6 socket address.
    static func socketAddressString(_ address: UnsafeMutablePointer<sockaddr>) -> String? {
        guard case .ip(let ip, _)? = SocketAddress(address)?.kind else { return nil }
        return ip.description
    }
}

/// hosts(5): `ADDRESS NAME [ALIASES…]`, `#` comments; names compare case-insensitively.
public enum HostsFile {
    /// The addresses listed for `name` in the text of a hosts file, in file order.
    public static func addresses(of name: String, inText text: String) -> [String] {
        let wanted = name.lowercased()
        var result: [String] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let content = line.prefix { $0 != "#" }
            let fields = content.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard fields.count >= 2 else { continue }
            let address = fields[0]
            guard HostName.ipv4Bytes(address) != nil || HostName.ipv6Bytes(address) != nil else { continue }
            if fields.dropFirst().contains(where: { $0.lowercased() == wanted }) && !result.contains(address) {
                result.append(address)
            }
        }
        return result
    }

    /// Reads `path` and looks `name` up in it.
    public static func addresses(of name: String, path: String) -> Result<[String], HostResolver.ResolveFailure> {
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failure(.init("cannot read hosts file \(path)"))
        }
        let addresses = addresses(of: name, inText: String(decoding: data, as: UTF8.self))
        return addresses.isEmpty ? .failure(.init("Name or service not known (not in \(path))")) : .success(addresses)
    }
}
