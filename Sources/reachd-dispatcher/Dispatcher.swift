import Dispatch
import FoundationEssentials
import ReachabilityClient
import ReachabilityCore
import ReachabilitySystem

/// Follows reachd's events: the network targets (started and stopped after their hold) and the
/// scripts (one batch at a time, at most one a `MinIntervalSec=`, later events coalesced). One
/// serial queue owns all state; the
/// scripts run on a queue of their own so that a slow script never delays a target, and
/// `systemctl` on a third so that neither waits for systemd.
final class Dispatcher: @unchecked Sendable {
    private let options: DispatcherOptions
    private let configuration: DispatcherConfiguration
    private let log: LogSink
    private let progressFile: ProgressFile
    private let queue = DispatchQueue(label: "reachd-dispatcher")
    private let scriptQueue = DispatchQueue(label: "reachd-dispatcher.scripts")
    private let unitQueue = DispatchQueue(label: "reachd-dispatcher.units")

    // Owned by `queue`.
    private var holds: [NetworkTarget: TargetHold] = [:]
    private var batches: ScriptBatchQueue
    /// The per-script result lines: a flood must not become one journal line per run. Owned by
    /// `scriptQueue`.
    private var runLog = LogRateLimiter(burst: 10, interval: 1)
    /// The last event handed to the scripts (or found in the progress file): what a `resync`
    /// is compared with.
    private var lastSeen: DispatcherProgress?
    private var subscription: ReachabilityClient.EventSubscription?
    private var stopping = false
    private var signalSources: [DispatchSourceSignal] = []

    init(options: DispatcherOptions, configuration: DispatcherConfiguration, stateDirectory: String, log: LogSink) {
        self.options = options
        self.configuration = configuration
        self.log = log
        self.progressFile = ProgressFile(directory: stateDirectory)
        self.batches = ScriptBatchQueue(minimumInterval: configuration.minimumIntervalSeconds)
        for target in NetworkTarget.allCases {
            holds[target] = TargetHold(holdSeconds: configuration.targets.hold(for: target))
        }
    }

    func start() throws {
        try FileSystem.createDirectories(progressFile.directory, mode: 0o755)
        let client = ReachabilityClient(socketPath: options.socketPath)
        queue.sync {
            lastSeen = progressFile.load(log: log)
            if let lastSeen {
                log.info("resuming after event #\(lastSeen.sequence) (\(lastSeen.status.status.rawValue), internet \(lastSeen.status.connectivity.rawValue))")
            }
            installSignalHandlers()
            let targets = configuration.targets.enabled
                ? NetworkTarget.allCases.map { "\($0.unitName) (hold \(format(configuration.targets.hold(for: $0))) s)" }.joined(separator: ", ")
                : "off"
            log.info("following \(client.socketPath); targets: \(targets); scripts: \(configuration.scripts.enabled ? (options.scriptDirectories.isEmpty ? configuration.scripts.directories : options.scriptDirectories).joined(separator: " ") : "off")")
            subscription = client.subscribe(after: lastSeen?.sequence, waitForDaemon: true, reconnect: true,
                onEvent: { [self] event in queue.async { self.received(event) } },
                onEnd: { [self] error in queue.async {
                    self.log.error("the subscription to reachd ended: \(error)")
                    ProcessSetup.exit(1)
                } })
        }
    }

    // MARK: - Events

    private func received(_ event: ReachabilityEvent) {
        guard !stopping else { return }
        log.debug("#\(event.sequence) \(event.event.rawValue) \(event.reason.code.rawValue): \(event.current.status.rawValue), internet \(event.current.connectivity.rawValue), changes \(event.changes.joined(separator: ","))")
        if configuration.targets.enabled {
            let now = Self.now()
            for target in NetworkTarget.allCases {
                let holdsNow = target.holds(in: event.current)
                guard var hold = holds[target] else { continue }
                // Before sleep a target that no longer holds stops at once: the machine does not wait for a hold.
                let beforeSleep = event.reason.code == .sleeping && !holdsNow
                let action = beforeSleep ? hold.observeNow(holdsNow) : hold.observe(holdsNow, now: now)
                holds[target] = hold
                perform(action, for: target, now: now, beforeSleep: beforeSleep)
            }
        }
        guard let acted = DispatcherProgress.eventToAct(on: event, after: lastSeen) else {
            // A restarted reachd with the status the scripts last saw: nothing to run.
            log.debug("#\(event.sequence) \(event.reason.code.rawValue): the status the scripts last saw; nothing to run")
            lastSeen = DispatcherProgress(sequence: event.sequence, status: event.current)
            if batches.isIdle { save(DispatcherProgress(sequence: event.sequence, status: event.current)) }
            return
        }
        lastSeen = DispatcherProgress(sequence: acted.sequence, status: acted.current)
        let action = batches.received(acted, now: Self.now())
        if action == .none { log.debug("#\(acted.sequence): scripts running or ran less than MinIntervalSec= ago; coalesced") }
        perform(action)
    }

    // MARK: - Targets

    private static func now() -> Double { Double(MonotonicClock.nanoseconds()) / 1e9 }

    private func perform(_ action: TargetHold.Action, for target: NetworkTarget, now: Double, beforeSleep: Bool = false) {
        switch action {
        case .none:
            break
        case .wake(let at):
            queue.asyncAfter(deadline: .now() + max(0, at - now) + 0.001) { [self] in
                guard !stopping, var hold = holds[target] else { return }
                let later = Self.now()
                let next = hold.deadlinePassed(now: later)
                holds[target] = hold
                // A wake-up for a change since superseded (its successor has a timer of its own)
                // does nothing; an early one (the two clocks differ) waits again.
                if case .wake(let again) = next, again != at { return }
                // The flap ended within the hold: said, so that a test (or an admin) can see
                // the hold run out without a start or stop.
                if next == .none { log.debug("\(target.unitName): hold over, nothing to change") }
                perform(next, for: target, now: later)
            }
        case .apply(let start):
            let unit = target.unitName, hold = format(configuration.targets.hold(for: target))
            log.info("\(start ? "starting" : "stopping") \(unit): \(target.rawValue) "
                     + (beforeSleep ? "lost, the machine is going to sleep" : "\(start ? "held" : "lost") for \(hold) s"))
            let systemctl = options.systemctl
            unitQueue.async { [log] in
                let outcome = ChildProcess.run(Self.resolve(systemctl), arguments: [start ? "start" : "stop", "--no-block", unit],
                                                environment: ["PATH=\(DispatcherEnvironment.path)", "LANG=C.UTF-8"], timeout: 30) { _, line in
                    log.warning("systemctl: \(TerminalText.escaped(line))")
                }
                if outcome != .exited(0) { log.error("systemctl \(start ? "start" : "stop") \(unit): \(Self.describe(outcome))") }
            }
        }
    }

    /// `systemctl` by name: the first of PATH's directories that has it.
    private static func resolve(_ program: String) -> String {
        if program.contains("/") { return program }
        for directory in DispatcherEnvironment.path.split(separator: ":") {
            let path = "\(directory)/\(program)"
            if (try? FileSystem.status(of: path, followingLinks: true))??.kind == .regularFile { return path }
        }
        return program
    }

    // MARK: - Scripts

    private func perform(_ action: ScriptBatchQueue.Action) {
        switch action {
        case .none:
            break
        case .run(let batch):
            run(batch)
        case .wake(let at):
            queue.asyncAfter(deadline: .now() + max(0, at - Self.now()) + 0.001) { [self] in
                guard !stopping else { return }
                perform(batches.deadlinePassed(now: Self.now()))
            }
        }
    }

    private func run(_ batch: DispatchBatch) {
        let configuration = configuration, options = options, log = log
        scriptQueue.async { [self] in
            if configuration.scripts.enabled {
                let directories = options.scriptDirectories.isEmpty ? configuration.scripts.directories : options.scriptDirectories
                Self.runScripts(for: batch, in: directories, configuration: configuration, log: log, limiter: &runLog)
            }
            queue.async { self.finished(batch) }
        }
    }

    private func finished(_ batch: DispatchBatch) {
        save(DispatcherProgress(sequence: batch.event.sequence, status: batch.event.current))
        if stopping { ProcessSetup.exit(0) }
        perform(batches.finished(now: Self.now()))
    }

    private func save(_ progress: DispatcherProgress) {
        do {
            try progressFile.save(progress)
        } catch {
            log.error("cannot save progress in \(progressFile.path): \(error)")
        }
    }

    /// Runs the eligible scripts that want this batch, one after another, in order. Each
    /// script's result line goes through `limiter`: a burst, then one a second, with the number
    /// held back.
    static func runScripts(for batch: DispatchBatch, in directories: [String], configuration: DispatcherConfiguration, log: LogSink,
                           limiter: inout LogRateLimiter) {
        let input: [UInt8]
        do {
            input = Array(try WireJSON.string(batch.event).utf8) + [UInt8(ascii: "\n")]
        } catch {
            log.error("cannot encode event #\(batch.event.sequence): \(error)")
            return
        }
        let description = "#\(batch.event.sequence) \(batch.event.reason.code.rawValue)\(batch.count > 1 ? " (\(batch.count) events)" : "")"
        for script in ScriptDirectories.scan(directories, log: log) {
            let name = TerminalText.escaped(script.name)
            switch script.verdict {
            case .masked:
                log.debug("\(name): masked")
                continue
            case .refused(let why):
                log.warning("refusing to run \(TerminalText.escaped(script.path)): \(why)")
                continue
            case .run:
                break
            }
            guard DispatcherScript.wants(configuration.changes(forScript: script.name), batch) else {
                log.debug("\(name): not for \(description) (changes \(batch.event.changes.joined(separator: ",")))")
                continue
            }
            let started = MonotonicClock.nanoseconds()
            let outcome = ChildProcess.run(script.path, environment: DispatcherEnvironment.variables(for: batch, script: script.name),
                                            input: input, timeout: configuration.scripts.timeoutSeconds) { stream, line in
                log.log(stream == .error ? .notice : .info, "\(name): \(TerminalText.escaped(line))")
            }
            let ended = MonotonicClock.nanoseconds()
            let milliseconds = (ended - started) / 1_000_000
            let (allowed, suppressed) = limiter.admit(now: Double(ended) / 1e9)
            guard allowed else { continue }
            let heldBack = suppressed > 0 ? " (\(suppressed) result lines held back)" : ""
            switch outcome {
            case .exited(0):
                log.info("\(name): \(description): exit 0 (\(milliseconds) ms)\(heldBack)")
            case .timedOut:
                log.warning("\(name): \(description): killed after Timeout=\(format(configuration.scripts.timeoutSeconds))s\(heldBack)")
            case .exited, .signaled, .failedToStart:
                log.warning("\(name): \(description): \(describe(outcome)) (\(milliseconds) ms)\(heldBack)")
            }
        }
    }

    static func describe(_ outcome: ChildProcess.Outcome) -> String {
        switch outcome {
        case .exited(let status): return "exit \(status)"
        case .signaled(let signal): return "killed by signal \(signal)"
        case .timedOut: return "killed after its time limit"
        case .failedToStart(let error): return "cannot run: \(error.text)"
        }
    }

    // MARK: - Signals

    /// SIGTERM/SIGINT: no new batch; a running one finishes (and is saved) first, so a restart
    /// resumes right after it.
    private func installSignalHandlers() {
        for signal in [Signal.terminate, .interrupt] {
            signal.ignore()
            let source = DispatchSource.makeSignalSource(signal: signal.number, queue: queue)
            source.setEventHandler { [self] in
                log.info("\(signal.name): stopping\(batches.running ? " after the running scripts" : "")")
                stopping = true
                subscription?.cancel()
                if !batches.running { ProcessSetup.exit(0) }
            }
            source.resume()
            signalSources.append(source)
        }
    }
}

/// Seconds without a needless fraction: 3, 0.5.
func format(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
}
