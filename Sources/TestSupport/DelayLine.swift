import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A slow, lossy link between two network namespaces, made in userspace (this kernel has no
/// `sch_netem`): a tun device in each namespace, both held open by this test process, and one
/// forwarding thread that holds each packet `rtt / 2` before writing it out of the other tun,
/// drops packets with probability `loss` (a seeded generator: a run repeats), and can limit the
/// rate. RTT, loss and rate can be changed while it runs; packets already held keep their time.
///
/// ```
///  host namespace                                      network namespace
///  hostDevice 10.S.0.2/24  ──── DelayLine thread ────  networkDevice 10.S.0.1/24
///  default via 10.S.0.1                                lo: remoteAddress 198.18.S.1
/// ```
///
/// The two namespaces reach each other only through it. `remoteAddress` stands for "the
/// internet": it is on the network namespace's loopback, off every prefix of the host side, so a
/// connection to it counts as internet traffic for reachd's passive samples (which leave out
/// peers on the uplink's own prefixes). With `defaultRoute` the host namespace's default route
/// goes through the line; otherwise only a route to `remoteAddress`'s /24 does. With `ipv6` the
/// same holds for `fd00:S::2/64`, `fd00:S::1/64` and `remoteAddress6` (`2001:db8:S::1`).
///
/// reachd sees a tun device as kind `vpn`: a test that wants it to stand for an ordinary uplink
/// configures `[Interfaces] Kind.NAME=ethernet` (or `wwan`) for `hostDevice`.
///
/// Measured on this machine (docs/testing.md): ping and the kernel's srtt within 2 % of the set
/// RTT from 50 to 800 ms. `stop()` (or deinit) ends the thread and closes both tuns, which
/// removes the devices with their addresses and routes; the namespaces are the caller's.
public final class DelayLine: @unchecked Sendable {
    /// What the line does to each packet; the same both ways.
    public struct Settings: Sendable, Equatable {
        /// Round-trip time added, seconds (each direction holds packets half of it).
        public var rtt: TimeInterval
        /// Probability that a packet is dropped, 0…1, drawn for each packet in each direction.
        public var loss: Double
        /// Bandwidth in each direction, kilobits a second; nil: unlimited. Packets wait their
        /// turn to be "sent" at this rate before they start their `rtt / 2`.
        public var rateKbps: Double?
        /// Packets held in each direction at most; more are dropped (netem's default, 1000).
        public var queueLimit: Int

        public init(rtt: TimeInterval, loss: Double = 0, rateKbps: Double? = nil, queueLimit: Int = 1000) {
            self.rtt = rtt; self.loss = loss; self.rateKbps = rateKbps; self.queueLimit = queueLimit
        }
    }

    /// Packet counts since the start, for each direction: `up` is host → network.
    public struct Statistics: Sendable, Equatable {
        public var forwardedUp = 0, forwardedDown = 0
        /// Dropped by `loss`.
        public var lostUp = 0, lostDown = 0
        /// Dropped because `queueLimit` packets were already held.
        public var overflowUp = 0, overflowDown = 0
    }

    public let host: TestNamespace
    public let network: TestNamespace
    /// The tun in `host` (the uplink reachd sees).
    public let hostDevice: String
    /// The tun in `network`.
    public let networkDevice: String
    public let subnet: Int
    /// The host side's address, `10.S.0.2`.
    public var hostAddress: String { "10.\(subnet).0.2" }
    /// The network side's address, `10.S.0.1`: the host's gateway.
    public var gatewayAddress: String { "10.\(subnet).0.1" }
    /// An address of the network namespace off the host's prefixes, `198.18.S.1`: run servers
    /// here (a `TrafficLoop` does).
    public var remoteAddress: String { "198.18.\(subnet).1" }
    /// With `ipv6`: `fd00:S::2`, `fd00:S::1` and `2001:db8:S::1`, as their IPv4 counterparts.
    public var hostAddress6: String { "fd00:\(subnet)::2" }
    public var gatewayAddress6: String { "fd00:\(subnet)::1" }
    public var remoteAddress6: String { "2001:db8:\(subnet)::1" }

    /// Shared with the forwarding thread, which must not keep the line itself alive (its deinit stops it).
    private final class Shared: Sendable {
        let state: Mutex<(settings: Settings, statistics: Statistics)>
        init(_ settings: Settings) { state = Mutex((settings, Statistics())) }
    }

    private let shared: Shared
    private let hostFD: Int32
    private let networkFD: Int32
    /// The forwarding thread's wake-up pipe: a byte written means "stop".
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let finished = DispatchSemaphore(value: 0)
    private let stopped = Mutex(false)

    /// Makes both tuns, their addresses and routes, and starts forwarding.
    /// - Parameters:
    ///   - host: the machine under test's namespace (where reachd runs); gets `hostDevice`.
    ///   - network: its network's namespace; gets `networkDevice` and `remoteAddress`.
    ///   - settings: RTT, loss, rate, queue limit at the start.
    ///   - seed: the loss generator's seed (SplitMix64).
    ///   - subnet: S in the addresses, 1…254; two lines in one namespace need two subnets.
    ///   - defaultRoute: the host's default route goes through the line (metric `metric`).
    ///   - ipv6: the IPv6 addresses and routes too.
    public init(host: TestNamespace, network: TestNamespace, settings: Settings, seed: UInt64 = 1,
                subnet: Int = 88, hostDevice: String = "dl0", networkDevice: String = "dl1",
                defaultRoute: Bool = true, metric: Int = 100, ipv6: Bool = false) throws {
        self.host = host; self.network = network; self.subnet = subnet
        self.hostDevice = hostDevice; self.networkDevice = networkDevice
        shared = Shared(settings)
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw FixtureError("pipe") }
        wakeRead = pipeFDs[0]; wakeWrite = pipeFDs[1]
        var opened: [Int32] = []
        do {
            let hostFD = try inNetworkNamespace(host) { try Self.openTun(hostDevice) }
            opened.append(hostFD)
            let networkFD = try inNetworkNamespace(network) { try Self.openTun(networkDevice) }
            opened.append(networkFD)
            self.hostFD = hostFD; self.networkFD = networkFD
        } catch {
            opened.forEach { close($0) }
            close(pipeFDs[0]); close(pipeFDs[1])
            throw error
        }
        do {
            try host.ip("addr add \(hostAddress)/24 dev \(hostDevice)")
            try host.ip("link set \(hostDevice) up")
            try network.ip("addr add \(gatewayAddress)/24 dev \(networkDevice)")
            try network.ip("link set \(networkDevice) up")
            try network.ip("addr add \(remoteAddress)/32 dev lo")
            try host.ip(defaultRoute ? "route add default via \(gatewayAddress) dev \(hostDevice) metric \(metric)"
                                     : "route add 198.18.\(subnet).0/24 via \(gatewayAddress) dev \(hostDevice)")
            if ipv6 {
                try host.ip("-6 addr add \(hostAddress6)/64 dev \(hostDevice) nodad")
                try network.ip("-6 addr add \(gatewayAddress6)/64 dev \(networkDevice) nodad")
                try network.ip("-6 addr add \(remoteAddress6)/128 dev lo nodad")
                try host.ip(defaultRoute ? "-6 route add default via \(gatewayAddress6) dev \(hostDevice) metric \(metric)"
                                         : "-6 route add 2001:db8:\(subnet)::/64 via \(gatewayAddress6) dev \(hostDevice)")
            }
        } catch {
            stopped.withLock { $0 = true }   // deinit runs: nothing for it to stop
            close(hostFD); close(networkFD); close(wakeRead); close(wakeWrite)
            _ = try? network.ip("addr del \(remoteAddress)/32 dev lo", check: false)
            throw error
        }
        let (shared, hostFD, networkFD, wakeRead, finished) = (shared, hostFD, networkFD, wakeRead, finished)
        let thread = Thread {
            Self.forward(shared: shared, hostFD: hostFD, networkFD: networkFD, wakeRead: wakeRead, seed: seed)
            finished.signal()
        }
        thread.start()
    }

    /// The settings in force; setting them applies to the packets that arrive from then on.
    public var settings: Settings {
        get { shared.state.withLock { $0.settings } }
        set { shared.state.withLock { $0.settings = newValue } }
    }

    /// Round-trip time added, seconds.
    public var rtt: TimeInterval {
        get { settings.rtt }
        set { shared.state.withLock { $0.settings.rtt = newValue } }
    }

    /// Probability of dropping each packet, 0…1.
    public var loss: Double {
        get { settings.loss }
        set { shared.state.withLock { $0.settings.loss = newValue } }
    }

    /// Bandwidth each way, kilobits a second; nil: unlimited.
    public var rateKbps: Double? {
        get { settings.rateKbps }
        set { shared.state.withLock { $0.settings.rateKbps = newValue } }
    }

    /// What the line did so far.
    public var statistics: Statistics { shared.state.withLock { $0.statistics } }

    /// Stops forwarding, waits for the thread, closes both tuns (the devices, their addresses
    /// and routes go with them) and removes `remoteAddress`. Idempotent.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        finished.wait()
        close(hostFD); close(networkFD); close(wakeRead); close(wakeWrite)
        _ = try? network.ip("addr del \(remoteAddress)/32 dev lo", check: false)
        _ = try? network.ip("-6 addr del \(remoteAddress6)/128 dev lo", check: false)
    }

    deinit { stop() }

    // MARK: - The tun devices

    /// Opens `/dev/net/tun` as an IP tun named `name` (no packet information header), non-blocking.
    private static func openTun(_ name: String) throws -> Int32 {
        let fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw FixtureError("open /dev/net/tun") }
        // struct ifreq: the name (16 bytes), then ifr_flags.
        var request = [UInt8](repeating: 0, count: 40)
        let bytes = Array(name.utf8.prefix(15))
        request.replaceSubrange(0 ..< bytes.count, with: bytes)
        let flags: UInt16 = 0x0001 | 0x1000   // IFF_TUN | IFF_NO_PI
        request[16] = UInt8(flags & 0xFF); request[17] = UInt8(flags >> 8)
        let tunSetIff: UInt = 0x4004_54CA
        guard request.withUnsafeMutableBytes({ ioctl(fd, tunSetIff, $0.baseAddress!) }) == 0 else {
            let error = FixtureError("TUNSETIFF \(name)")
            close(fd)
            throw error
        }
        return fd
    }

    // MARK: - Forwarding

    /// One direction's held packets, in the order they leave.
    private struct HeldQueue {
        var packets: [(release: UInt64, bytes: [UInt8])] = []
        var head = 0
        /// When the last packet held finishes its transmission at the limited rate.
        var transmitEnd: UInt64 = 0
        /// The last release time: packets never overtake each other.
        var lastRelease: UInt64 = 0

        var count: Int { packets.count - head }
        var first: (release: UInt64, bytes: [UInt8])? { head < packets.count ? packets[head] : nil }

        mutating func removeFirst() {
            head += 1
            if head == packets.count { packets.removeAll(keepingCapacity: true); head = 0 }
        }
    }

    /// The forwarding thread: until `wakeRead` is readable or a tun fails (its namespace deleted).
    private static func forward(shared: Shared, hostFD: Int32, networkFD: Int32, wakeRead: Int32, seed: UInt64) {
        // The default 50 µs timer slack on every wake-up would add up on the short RTTs.
        _ = GNUFunctions.prctl?(GNUFunctions.setTimerSlack, 1, 0, 0, 0)
        var random = SplitMix64(seed: seed)
        var up = HeldQueue(), down = HeldQueue()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var fds = [pollfd(fd: hostFD, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: networkFD, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        guard let ppoll = GNUFunctions.ppoll else { return }

        func release(_ queue: inout HeldQueue, to fd: Int32, now: UInt64) {
            while let packet = queue.first, packet.release <= now {
                _ = packet.bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                queue.removeFirst()
            }
        }

        func take(_ count: Int, into queue: inout HeldQueue, upward: Bool, now: UInt64) {
            let (settings, dropped) = shared.state.withLock { state -> (Settings, Bool) in
                let settings = state.settings
                let lost = settings.loss > 0 && Double(random.next() >> 11) / Double(1 << 53) < settings.loss
                let overflow = !lost && queue.count >= settings.queueLimit
                if upward {
                    if lost { state.statistics.lostUp += 1 } else if overflow { state.statistics.overflowUp += 1 } else { state.statistics.forwardedUp += 1 }
                } else {
                    if lost { state.statistics.lostDown += 1 } else if overflow { state.statistics.overflowDown += 1 } else { state.statistics.forwardedDown += 1 }
                }
                return (settings, lost || overflow)
            }
            guard !dropped else { return }
            var start = now
            if let rate = settings.rateKbps, rate > 0 {
                start = max(now, queue.transmitEnd)
                queue.transmitEnd = start + UInt64(Double(count * 8) / (rate * 1000) * 1e9)
                start = queue.transmitEnd
            }
            let release = max(start + UInt64(max(0, settings.rtt) / 2 * 1e9), queue.lastRelease)
            queue.lastRelease = release
            queue.packets.append((release, Array(buffer[0 ..< count])))
        }

        while true {
            var now = monotonicNanoseconds()
            release(&up, to: networkFD, now: now)
            release(&down, to: hostFD, now: now)
            let next = [up.first?.release, down.first?.release].compactMap { $0 }.min()
            var timeout = timespec()
            if let next {
                let wait = next > now ? next - now : 0
                timeout = timespec(tv_sec: Int(wait / 1_000_000_000), tv_nsec: Int(wait % 1_000_000_000))
            }
            for index in fds.indices { fds[index].revents = 0 }
            let ready = next == nil ? ppoll(&fds, 3, nil, nil) : withUnsafePointer(to: &timeout) { ppoll(&fds, 3, $0, nil) }
            if ready < 0 && errno != EINTR { return }
            if fds[2].revents != 0 { return }
            if fds[0 ..< 2].contains(where: { $0.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 }) { return }
            now = monotonicNanoseconds()
            for (index, upward) in [(0, true), (1, false)] where fds[index].revents & Int16(POLLIN) != 0 {
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(fds[index].fd, $0.baseAddress, $0.count) }
                    if count < 0 && errno != EAGAIN && errno != EINTR { return }
                    guard count > 0 else { break }
                    if upward { take(count, into: &up, upward: true, now: now) } else { take(count, into: &down, upward: false, now: now) }
                }
            }
        }
    }
}
