import ReachabilityCore
import ReachabilitySystem
#if canImport(Glibc)
import Glibc
#endif

/// Reads each managed-mode Wi-Fi interface's connection from the kernel (nl80211's interface and
/// station dumps over a `GenericNetlinkSocket`, read by `NL80211Reply`): the access point, the
/// signal and rate the driver reports, the SSID and the channel. What reachd knows of a Wi-Fi
/// device no daemon manages, and the dBm NetworkManager does not publish.
///
/// Blocking (each request waits at most `timeout` for the kernel), so called off the monitor's
/// queue. Not thread-safe: one caller at a time.
public final class NL80211Reader: @unchecked Sendable {
    private let timeout: Double
    private var family: UInt16?
    private var sequence: UInt32 = 0
    private var buffer = [UInt8](repeating: 0, count: 32 * 1024)

    public init(timeout: Double = 2) {
        self.timeout = timeout
    }

    /// Why nothing could be read.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// The kernel has no nl80211 (no cfg80211: no Wi-Fi hardware, or a container).
        case absent
        /// The socket or a request failed (the text says which and why).
        case failed(String)

        public var description: String {
            switch self {
            case .absent: "the kernel has no nl80211 (no Wi-Fi hardware, or cfg80211 not loaded)"
            case .failed(let text): text
            }
        }
    }

    /// Each managed-mode interface associated with an access point, by interface name, as a
    /// station of owner `nl80211`.
    public func stations() -> Result<[String: WiFiStation], Failure> {
        do {
            let socket = try GenericNetlinkSocket(timeout: timeout)
            let family = try resolve(socket)
            var result: [String: WiFiStation] = [:]
            let interfaces = try dump(socket, NL80211Request.getInterfaces(family: family, sequence: next()), family: family).interfaces
            for interface in interfaces where interface.interfaceType == NL80211Request.interfaceTypeStation {
                guard let ifindex = interface.ifindex, let name = Self.name(of: ifindex) else { continue }
                let stations = try dump(socket, NL80211Request.getStations(family: family, ifindex: ifindex, sequence: next()),
                                        family: family).stations
                // NetworkManager passes over a record whose flags say it is not associated.
                guard let station = stations.first(where: { $0.associated != false }) else { continue }
                result[name] = WiFiStation(nl80211: station, interface: interface)
            }
            return .success(result)
        } catch let failure as Failure {
            return .failure(failure)
        } catch {
            return .failure(.failed("\(error)"))
        }
    }

    private func next() -> UInt32 {
        sequence &+= 1
        return sequence
    }

    /// nl80211's family id, asked once.
    private func resolve(_ socket: borrowing GenericNetlinkSocket) throws -> UInt16 {
        if let family { return family }
        let sequence = next()
        try socket.send(NL80211Request.getFamily(sequence: sequence))
        let count = try receive(socket)
        do {
            guard let id = try NL80211Request.familyID(Array(buffer[0..<count]), sequence: sequence) else {
                throw Failure.failed("nl80211: the control family's answer names no family id")
            }
            family = id
            return id
        } catch NL80211ReplyError.kernel(errno: ENOENT) {
            throw Failure.absent
        }
    }

    /// Sends a dump request and reads its reply to the end (again once, when the kernel's list
    /// changed during it).
    private func dump(_ socket: borrowing GenericNetlinkSocket, _ request: [UInt8], family: UInt16) throws -> NL80211Reply.Records {
        var attempt = 0
        while true {
            attempt += 1
            try socket.send(request)
            let sequence = request.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self) }
            var records = NL80211Reply.Records()
            var interrupted = false
            while true {
                let count = try receive(socket)
                let progress = try NL80211Reply.parse(Array(buffer[0..<count]), family: family, sequence: sequence, into: &records)
                interrupted = interrupted || progress.interrupted
                if progress.done { break }
            }
            if !interrupted || attempt >= 2 { return records }
        }
    }

    private func receive(_ socket: borrowing GenericNetlinkSocket) throws -> Int {
        let count = try buffer.withUnsafeMutableBytes { raw in try socket.receive(into: raw) }
        if count == 0 { throw Failure.failed("nl80211: the kernel closed the reply") }
        return count
    }

    /// The interface's name in this network namespace (`if_indextoname(3)`).
    static func name(of ifindex: Int) -> String? {
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard ifindex > 0, if_indextoname(UInt32(ifindex), &name) != nil else { return nil }
        let bytes = name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
