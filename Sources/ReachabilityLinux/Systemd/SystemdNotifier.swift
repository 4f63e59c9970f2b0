import Dispatch
import FoundationEssentials
import ReachabilitySystem
import Synchronization

/// Tells systemd how the service is doing (`sd_notify(3)`), for `Type=notify` units: `READY=1`
/// once the first full state is known, `STATUS=` lines for `systemctl status`, `RELOADING=1`
/// around a SIGHUP reload, `STOPPING=1`, and `WATCHDOG=1` pings when the unit sets `WatchdogSec=`.
///
/// Outside systemd (no `$NOTIFY_SOCKET`) every call does nothing, so reachd can call it
/// unconditionally. The environment is read once, at init, from the one it is given (the
/// process's by default), so tests hand each notifier its own socket without touching the
/// process's environment. The watchdog timer runs on `queue`; call the methods from any thread.
public final class SystemdNotifier: @unchecked Sendable {
    /// The queue the watchdog timer fires on.
    public let queue: DispatchQueue
    /// A lock rather than `queue.sync`, so the methods may be called on `queue`.
    private let watchdogTimer = Mutex<WatchdogTimer?>(nil)

    /// A Dispatch source may be cancelled from any thread.
    private struct WatchdogTimer: @unchecked Sendable {
        let source: DispatchSourceTimer
    }

    /// `$NOTIFY_SOCKET`: a path, or `@name` for an abstract socket.
    private let socketAddress: String?
    /// `$WATCHDOG_USEC`, when `$WATCHDOG_PID` is unset or this process.
    public let watchdogInterval: Duration?

    /// - Parameter environment: where `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` come from.
    public init(queue: DispatchQueue = DispatchQueue(label: "reachd.sd-notify"),
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.queue = queue
        socketAddress = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        watchdogInterval = Self.watchdogInterval(environment)
    }

    deinit { watchdogTimer.withLock { $0?.source.cancel() } }

    /// True when systemd is listening (`$NOTIFY_SOCKET` is set).
    public var isEnabled: Bool { socketAddress != nil }

    /// Sends `state` (newline-separated `KEY=VALUE` lines) as one datagram to `$NOTIFY_SOCKET`,
    /// as `sd_notify(3)` does (the kernel adds our credentials for systemd).
    /// - Returns: true when sent, false when not under systemd or when sending failed
    ///   (a lost notification is not a reason to stop the daemon).
    @discardableResult
    public func notify(_ state: String) -> Bool {
        guard let socketAddress else { return false }
        let address: SocketAddress
        do {
            // "@name": Linux's abstract namespace.
            address = socketAddress.hasPrefix("@") ? try .abstractUnix(String(socketAddress.dropFirst())) : try .unix(socketAddress)
        } catch {
            return false
        }
        let bytes = Array(state.utf8)
        guard let socket = try? FileDescriptor.socket(for: address, .datagram, nonBlocking: false) else { return false }
        let sent = bytes.withUnsafeBytes { raw in try? socket.send(raw, to: address) }
        return sent == bytes.count
    }

    /// `READY=1`, with the first `STATUS=` line when given.
    @discardableResult
    public func ready(status: String? = nil) -> Bool {
        notify(status.map { "READY=1\nSTATUS=\(Self.oneLine($0))" } ?? "READY=1")
    }

    /// `STATUS=text`, e.g. `Status.systemdStatusText`.
    @discardableResult
    public func status(_ text: String) -> Bool {
        notify("STATUS=\(Self.oneLine(text))")
    }

    /// `RELOADING=1` with `MONOTONIC_USEC=` (what systemd ≥ 253 wants); send `ready()` when the
    /// reload is over, whether the new configuration was taken or not.
    @discardableResult
    public func reloading() -> Bool {
        let usec = MonotonicClock.nanoseconds() / 1000
        return notify("RELOADING=1\nMONOTONIC_USEC=\(usec)")
    }

    /// `STOPPING=1`.
    @discardableResult
    public func stopping() -> Bool { notify("STOPPING=1") }

    /// The watchdog interval systemd expects pings within, as `sd_watchdog_enabled(3)` reads it
    /// from `environment`, or nil when the unit has no `WatchdogSec=` (or it is meant for
    /// another process).
    static func watchdogInterval(_ environment: [String: String]) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"], !pid.isEmpty, Int32(pid) != ProcessSetup.processID { return nil }
        return .microseconds(Int64(clamping: usec))
    }

    /// Starts pinging `WATCHDOG=1` at half the watchdog interval, when there is one.
    ///
    /// The pings come from a timer on `pingQueue` (by default the notifier's `queue`): pass the
    /// queue that serves the daemon's clients and owns its state, so that when it is wedged the
    /// pings stop and systemd restarts the daemon.
    /// - Returns: the interval systemd expects, or nil when no watchdog is configured.
    @discardableResult
    public func startWatchdog(on pingQueue: DispatchQueue? = nil) -> Duration? {
        guard let interval = watchdogInterval else { return nil }
        let (seconds, attoseconds) = (interval / 2).components
        let half = DispatchTimeInterval.microseconds(Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000))
        let timer = DispatchSource.makeTimerSource(queue: pingQueue ?? queue)
        timer.schedule(deadline: .now(), repeating: half, leeway: .milliseconds(10))
        timer.setEventHandler { [weak self] in self?.notify("WATCHDOG=1") }
        let next = WatchdogTimer(source: timer)
        watchdogTimer.withLock { current in
            current?.source.cancel()
            current = next
        }
        timer.resume()
        return interval
    }

    /// Stops the watchdog pings.
    public func stopWatchdog() {
        watchdogTimer.withLock { current in
            current?.source.cancel()
            current = nil
        }
    }

    /// `STATUS=` takes one line; a newline would start a new (bogus) assignment.
    private static func oneLine(_ text: String) -> String {
        text.replacingLineFeedsWithSpaces
    }
}
