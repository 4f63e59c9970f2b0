import CSystemd
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Tells systemd how the service is doing (`sd_notify(3)`), for `Type=notify` units: `READY=1`
/// once the first full state is known, `STATUS=` lines for `systemctl status`, `RELOADING=1`
/// around a SIGHUP reload, `STOPPING=1`, and `WATCHDOG=1` pings when the unit sets `WatchdogSec=`.
///
/// Outside systemd (no `$NOTIFY_SOCKET`) every call does nothing, so reachd can call it
/// unconditionally. The watchdog timer runs on `queue`; call the methods from any thread.
public final class SystemdNotifier: @unchecked Sendable {
    /// The queue the watchdog timer fires on.
    public let queue: DispatchQueue
    /// Guards `watchdogTimer`; a lock rather than `queue.sync` so the methods may be called on `queue`.
    private let lock = NSLock()
    private var watchdogTimer: DispatchSourceTimer?

    public init(queue: DispatchQueue = DispatchQueue(label: "reachd.sd-notify")) {
        self.queue = queue
    }

    deinit { lock.withLock { watchdogTimer?.cancel() } }

    /// True when systemd is listening (`$NOTIFY_SOCKET` is set).
    public static var isEnabled: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// Sends `state` (newline-separated `KEY=VALUE` lines) with `sd_notify(0, state)`.
    /// - Returns: true when sent, false when not under systemd or when sending failed
    ///   (a lost notification is not a reason to stop the daemon).
    @discardableResult
    public func notify(_ state: String) -> Bool {
        sd_notify(0, state) > 0
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
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let usec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        return notify("RELOADING=1\nMONOTONIC_USEC=\(usec)")
    }

    /// `STOPPING=1`.
    @discardableResult
    public func stopping() -> Bool { notify("STOPPING=1") }

    /// The watchdog interval systemd expects pings within (`sd_watchdog_enabled(3)`), or nil when
    /// the unit has no `WatchdogSec=` (or it is meant for another process).
    public static var watchdogInterval: Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
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
        guard let interval = Self.watchdogInterval else { return nil }
        let (seconds, attoseconds) = (interval / 2).components
        let half = DispatchTimeInterval.microseconds(Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000))
        let timer = DispatchSource.makeTimerSource(queue: pingQueue ?? queue)
        timer.schedule(deadline: .now(), repeating: half, leeway: .milliseconds(10))
        timer.setEventHandler { [weak self] in self?.notify("WATCHDOG=1") }
        lock.withLock {
            watchdogTimer?.cancel()
            watchdogTimer = timer
        }
        timer.resume()
        return interval
    }

    /// Stops the watchdog pings.
    public func stopWatchdog() {
        lock.withLock {
            watchdogTimer?.cancel()
            watchdogTimer = nil
        }
    }

    /// `STATUS=` takes one line; a newline would start a new (bogus) assignment.
    private static func oneLine(_ text: String) -> String {
        text.replacingOccurrences(of: "\n", with: " ")
    }
}
