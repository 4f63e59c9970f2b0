import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem

/// The TCP connect of `Check(host:, port:)`, made by the client in its own process: its own
/// network namespace, routes and credentials decide whether it gets through, never reachd's.
/// A non-blocking `connect(2)` waited for with `poll(2)`; closed as soon as it is established,
/// nothing is sent.
public enum TCPConnect {
    /// Connects to `address` (an IPv4 or IPv6 literal) on `port` within `timeout` seconds.
    /// A refusal is `TCPCheck.refusedError` (`portClosed`): the host answered.
    public static func connect(address: String, port: Int, timeout: TimeInterval) -> TCPCheck {
        func failed(_ text: String) -> TCPCheck { TCPCheck(port: port, connected: false, rttMs: nil, error: text) }
        guard let destination = SocketAddress(ip: address, port: UInt16(truncatingIfNeeded: port)) else {
            return failed("\(address) is not an IP address")
        }
        let socket: FileDescriptor
        do {
            socket = try FileDescriptor.socket(for: destination, nonBlocking: true)
        } catch {
            return failed("\(error)")
        }
        let start = ContinuousClock.now
        do {
            try socket.connect(to: destination)
        } catch where error == .inProgress {
            let deadline = start + .milliseconds(Int(min(max(timeout, 0), 3600) * 1000))
            do {
                guard try socket.waitUntilWritable(deadline: deadline) else { return failed("timed out after \(seconds(timeout))") }
                if let refused = try socket.pendingError() { return failed(refused.text) }
            } catch {
                return failed("\(error)")
            }
        } catch {
            return failed(error.text)
        }
        let ms = (ContinuousClock.now - start) / .milliseconds(1)
        return TCPCheck(port: port, connected: true, rttMs: (ms * 1000).rounded() / 1000, error: nil)
    }

    /// The daemon's answer with this process's TCP connect: the candidate addresses in turn
    /// until one answers (connects or refuses), within `timeout` for all of them.
    public static func complete(_ answer: HostCheck, port: Int, timeout: TimeInterval) -> HostCheck {
        let candidates = answer.tcpCandidates
        guard !candidates.isEmpty else {
            return answer.withTCP(TCPCheck(port: port, connected: false, rttMs: nil, error: "not attempted: no usable route"), address: nil)
        }
        let deadline = Date().addingTimeInterval(timeout)
        var last: (address: String, check: TCPCheck)?
        for address in candidates {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { break }
            let check = connect(address: address, port: port, timeout: left)
            last = (address, check)
            if check.connected || check.portClosed { break }
        }
        guard let last else {
            return answer.withTCP(TCPCheck(port: port, connected: false, rttMs: nil, error: "timed out after \(seconds(timeout))"), address: nil)
        }
        return answer.withTCP(last.check, address: last.address)
    }

    /// `5 s`, `0.25 s`.
    static func seconds(_ t: TimeInterval) -> String {
        let ms = (t * 1000).rounded()
        return ms.truncatingRemainder(dividingBy: 1000) == 0 ? "\(Int(ms / 1000)) s" : "\(ms / 1000) s"
    }
}
