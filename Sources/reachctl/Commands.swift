import Dispatch
import FoundationEssentials
import ReachabilityClient
import ReachabilityCore
import ReachabilitySystem
import Synchronization

/// Maps client errors to reachctl's messages and exit statuses.
func exitOnError(_ error: Error) -> Never {
    switch error {
    case ReachabilityClientError.daemonNotRunning(let path):
        // The resolved path, with the others looked at when it was one of the defaults.
        let candidates = ReachabilitySocketPath.candidates()
        let tried = candidates.contains(path) ? candidates : [path]
        let message = NotRunning.message(tried.map { ($0, FileManager.default.fileExists(atPath: $0)) })
        emit("reachctl: \(TerminalText.escaped(message))\nreachctl: \(NotRunning.hint)\n", to: .error)
        ProcessSetup.exit(ExitCode.unavailable)
    // A daemon that cannot be reached, hangs up or stays silent does not answer either: exit 69, like no socket.
    case ReachabilityClientError.connectionFailed, ReachabilityClientError.connectionClosed,
         ReachabilityClientError.timedOut:
        fail("\(error)", code: ExitCode.unavailable)
    case let ReachabilityClientError.remote(remote) where remote.name == VarlinkError.busy(retryAfterMs: 0).name:
        let ms = remote.parameters["retryAfterMs"]?.intValue ?? 1000
        fail("reachd is busy (too many requests in flight); try again in \(formatSeconds(Double(ms) / 1000)) s", code: ExitCode.unavailable)
    case let error as ReachabilityClientError:
        fail(error.description)
    default:
        fail("\(error)")
    }
}

/// What reachctl says when no daemon answers at any path it tried.
enum NotRunning {
    static let hint = "start it with 'systemctl start reachd.socket', or with 'make run' in its source tree"

    /// `reachd is not running (no socket at A, nor at B)`, or, for a file nobody listens on (a
    /// daemon that stopped without removing it; a new one replaces it), `(A is a stale socket:
    /// it exists, nobody listens on it)`; `hint` follows on a line of its own. `tried`: each
    /// path, in order, and whether a file is there.
    static func message(_ tried: [(path: String, exists: Bool)]) -> String {
        let stale = tried.filter(\.exists).map(\.path)
        let missing = tried.filter { !$0.exists }.map(\.path)
        var why: [String] = []
        if !missing.isEmpty { why.append("no socket at " + missing.joined(separator: ", nor at ")) }
        for path in stale {
            why.append("\(path) is a stale socket: it exists, nobody listens on it")
        }
        return "reachd is not running (\(why.joined(separator: "; ")))"
    }
}

/// Exits with `code` on SIGINT/SIGTERM: 0 for a `monitor` the user stops (it has done its job),
/// 1 for an interrupted `wait` (it did not see its condition).
func exitOnInterrupt(with code: Int32) {
    for signal in [Signal.interrupt, .terminate] {
        signal.ignore()
        let source = DispatchSource.makeSignalSource(signal: signal.number, queue: .global())
        source.setEventHandler { ProcessSetup.exit(code) }
        source.resume()
        interruptSources.append(source)
    }
}
nonisolated(unsafe) var interruptSources: [DispatchSourceSignal] = []

/// Whether a streaming command (`monitor`, `wait`, `check --watch`) has heard reachd at all. A
/// daemon that accepts the connection and never answers (stuck, or something else on the
/// socket) does not answer, as one that is not running: exit 69, never 1 ("not online") or a
/// silent wait for ever.
final class FirstAnswer: Sendable {
    let socketPath: String
    private let answered = Mutex(false)

    /// Exits 69 unless an event came within `seconds` (a one-shot call's time-out).
    init(socketPath: String, seconds: Double) {
        self.socketPath = socketPath
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
            if !heard { failNotAnswering(after: seconds) }
        }
    }

    func hear() { answered.withLock { $0 = true } }
    var heard: Bool { answered.withLock { $0 } }

    func failNotAnswering(after seconds: Double) -> Never {
        fail("reachd did not answer within \(formatSeconds(seconds)) s (it accepted the connection at \(socketPath)); "
             + "is it stuck? 'systemctl status reachd' or its log says more", code: ExitCode.unavailable)
    }
}

/// `reachctl status [--json] [--verbose]`.
func runStatus(client: ReachabilityClient, json: Bool, verbose: Bool) async -> Never {
    do {
        let status = try await client.status()
        printLine(json ? jsonLine(status) : Style().summary(status))
        if verbose && !json {
            for line in status.routingLines { printLine("  " + Style().safe(line)) }
            if let line = status.announcementLine { printLine("  " + Style().safe(line)) }
            for line in status.uplinkLines { printLine("  " + Style().safe(line)) }
        }
        ProcessSetup.exit(ExitCode.success)
    } catch {
        exitOnError(error)
    }
}

/// `reachctl monitor [--json] [--after SEQ] [--status-only] [--changes FIELD,…]`.
func runMonitor(client: ReachabilityClient, json: Bool, after: Int?, statusOnly: Bool, changes: [String]?) async -> Never {
    exitOnInterrupt(with: ExitCode.success)
    let style = Style()
    let first = FirstAnswer(socketPath: client.socketPath, seconds: client.callTimeout)
    do {
        // On stderr, so that `--json`'s stdout stays one event per line.
        let events = client.events(after: after, statusOnly: statusOnly, changes: changes) { change in
            switch change {
            case .lost(let reason):
                emit("reachctl: reachd went away (\(TerminalText.escaped(reason))); waiting for it to come back\n", to: .error)
            case .restored(let after):
                emit("reachctl: reachd is back" + (after.map { "; resuming after #\($0)" } ?? "") + "\n", to: .error)
            }
        }
        for try await event in events {
            first.hear()
            if json {
                printLine(jsonLine(event))
            } else {
                printLine(style.monitorLine(event))
            }
        }
        ProcessSetup.exit(ExitCode.success)
    } catch {
        exitOnError(error)
    }
}

/// `reachctl wait [--timeout SEC] [--internet] [--interface NAME] [--family ipv4|ipv6] [--stable SEC]
/// [--quality LEVEL] [-q]`: 0 met, 1 timed out. `--family` waits for that family alone (its path, with
/// `--internet` its own verdict); `--quality` for the path's measured level to be at least LEVEL.
func runWait(client: ReachabilityClient, timeout: Double, internet: Bool, interface: String?, quiet: Bool,
             stable: Double?, family: AddressFamily? = nil, quality: LinkQuality.Level? = nil) async -> Never {
    exitOnInterrupt(with: ExitCode.failure)
    let first = FirstAnswer(socketPath: client.socketPath, seconds: client.callTimeout)
    if timeout > 0 {
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
            // Not online is 1; not knowing, because reachd never answered, is 69.
            if !first.heard { first.failNotAnswering(after: timeout) }
            if !quiet { emit("reachctl: timed out after \(formatSeconds(timeout)) s\n", to: .error) }
            ProcessSetup.exit(ExitCode.failure)
        }
    }
    let stability = stable.map { StableWait(seconds: $0, interface: interface, quality: quality != nil, quiet: quiet) }
    do {
        for try await event in client.events() {
            first.hear()
            let met = event.current.satisfies(internet: internet, interface: interface, family: family, quality: quality)
            guard let stability else {
                if met {
                    if !quiet { printLine(Style().summary(event.current)) }
                    ProcessSetup.exit(ExitCode.success)
                }
                continue
            }
            stability.observe(event, met: met)
        }
        exitOnError(ReachabilityClientError.connectionClosed)
    } catch {
        exitOnError(error)
    }
}

/// `wait --stable SEC`: the condition must hold for SEC seconds during which no event changes
/// status, reachability, connectivity or the primary interface (nor, with `--interface`, the
/// interfaces); each such change starts the count again, and the condition failing stops it.
final class StableWait: @unchecked Sendable {
    private let seconds: Double
    private let fields: Set<String>
    private let quiet: Bool
    /// Owns `generation`: the timer and the event loop meet here.
    private let queue = DispatchQueue(label: "reachctl.wait.stable")
    private var generation = 0
    private var armed = false
    private var latest: Status?

    init(seconds: Double, interface: String?, quality: Bool = false, quiet: Bool) {
        self.seconds = seconds
        self.quiet = quiet
        var fields: Set<Status.Field> = [.status, .reachable, .connectivity, .primary]
        if interface != nil { fields.insert(.interfaces) }
        if quality { fields.insert(.linkQuality) }
        self.fields = Set(fields.map(\.rawValue))
    }

    func observe(_ event: ReachabilityEvent, met: Bool) {
        queue.sync {
            latest = event.current
            guard met else { generation += 1; armed = false; return }
            let changed = event.event == .initial || !fields.isDisjoint(with: event.changes)
            guard changed || !armed else { return }
            generation += 1
            armed = true
            let mine = generation
            queue.asyncAfter(deadline: .now() + seconds) { [self] in
                guard generation == mine else { return }
                if !quiet, let latest { printLine(Style().summary(latest)) }
                ProcessSetup.exit(ExitCode.success)
            }
        }
    }
}

func formatSeconds(_ seconds: Double) -> String {
    seconds.rounded() == seconds ? String(Int(seconds)) : String(seconds)
}
