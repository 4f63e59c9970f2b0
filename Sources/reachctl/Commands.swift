import Dispatch
import FoundationEssentials
import ReachabilityClient
import ReachabilityCore
import ReachabilitySystem

/// Maps client errors to reachctl's messages and exit statuses.
func exitOnError(_ error: Error) -> Never {
    switch error {
    case ReachabilityClientError.daemonNotRunning(let path):
        fail("reachd is not running (no socket at \(path))", code: ExitCode.unavailable)
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
    do {
        for try await event in client.events(after: after, statusOnly: statusOnly, changes: changes) {
            if json {
                printLine(jsonLine(event))
            } else {
                let interface = event.reason.interface.map { " \(style.safe($0))" } ?? ""
                let changed = event.changes.isEmpty ? "" : " [\(event.changes.joined(separator: ","))]"
                printLine("\(Timestamp.string(from: event.timestamp)) #\(event.sequence) \(event.reason.code.rawValue)\(interface)\(changed): \(style.summary(event.current))")
            }
        }
        ProcessSetup.exit(ExitCode.success)
    } catch {
        exitOnError(error)
    }
}

/// `reachctl wait [--timeout SEC] [--internet] [--interface NAME] [--family ipv4|ipv6] [--stable SEC] [-q]`:
/// 0 met, 1 timed out. `--family` waits for that family alone (its path, with `--internet` its own verdict).
func runWait(client: ReachabilityClient, timeout: Double, internet: Bool, interface: String?, quiet: Bool,
             stable: Double?, family: AddressFamily? = nil) async -> Never {
    exitOnInterrupt(with: ExitCode.failure)
    if timeout > 0 {
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
            if !quiet { emit("reachctl: timed out after \(formatSeconds(timeout)) s\n", to: .error) }
            ProcessSetup.exit(ExitCode.failure)
        }
    }
    let stability = stable.map { StableWait(seconds: $0, interface: interface, quiet: quiet) }
    do {
        for try await event in client.events() {
            let met = event.current.satisfies(internet: internet, interface: interface, family: family)
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

    init(seconds: Double, interface: String?, quiet: Bool) {
        self.seconds = seconds
        self.quiet = quiet
        var fields: Set<Status.Field> = [.status, .reachable, .connectivity, .primary]
        if interface != nil { fields.insert(.interfaces) }
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
