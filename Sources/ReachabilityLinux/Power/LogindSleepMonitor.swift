import CSystemd
import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityHost
import ReachabilitySystem

/// Follows logind's `PrepareForSleep` on the system bus, holding a `delay` inhibitor while the
/// machine is awake, and performs what `SleepCoordinator` decides: before sleep `onSleep` (which
/// calls its argument once the `sleeping` status is published; the inhibitor goes then), after
/// wake `onWake`, and the inhibitor taken again. A sleep with no end for `sleepLimit` seconds
/// of `CLOCK_MONOTONIC` is taken as a wake (logged at notice).
///
/// Runs on `queue`; the bus socket is watched by Dispatch sources as `ModemManagerSource` does.
/// Only signals from the current owner of `org.freedesktop.login1` count, and only the bus
/// itself tells who that is. Without a bus or without logind (containers), nothing happens and
/// that is logged once at info.
public final class LogindSleepMonitor: @unchecked Sendable, QueueConfined {
    static let service = "org.freedesktop.login1"
    static let path = "/org/freedesktop/login1"
    static let manager = "org.freedesktop.login1.Manager"

    public let queue: DispatchQueue
    package let queueConfinement: QueueConfinement
    private let busAddress: String?
    private let log: LogSink
    private let onSleep: @Sendable (_ prepared: @escaping @Sendable () -> Void) -> Void
    private let onWake: @Sendable () -> Void
    // Everything below is confined to `queue`.
    /// The bus while connected.
    private var connection: SDBusConnection<CallPurpose>?
    private var coordinator: SleepCoordinator
    /// The timer of the coordinator's `armSleepLimit`, on `DispatchTime` (`CLOCK_MONOTONIC` on
    /// Linux: it stands still while the machine sleeps, as the limit wants).
    private var sleepLimitTimer: DispatchWorkItem?
    /// The inhibitor's file descriptor (our duplicate of the one logind sent); closed when
    /// released, or with this object.
    private var inhibitor: FileDescriptor?
    private var reportedAbsent = false
    private var reportedForged = false

    /// - Parameters:
    ///   - busAddress: a D-Bus address to use instead of the system bus (tests); nil: the system
    ///     bus, or `DBUS_SYSTEM_BUS_ADDRESS` when set.
    ///   - onSleep: the machine is about to sleep; call the argument (from any thread) once the
    ///     status says so, and the sleep may go on.
    ///   - onWake: the machine woke.
    ///   - log: what reachd logs about logind; by default nothing (reachd passes its sink).
    ///   - sleepLimit: seconds of `CLOCK_MONOTONIC` after which a `PrepareForSleep(true)` with
    ///     no `false` is taken as a wake (`[Monitor] SleepLimit=`).
    public init(queue: DispatchQueue = DispatchQueue(label: "reachd.logind"), busAddress: String? = nil,
                log: LogSink = .discarding, sleepLimit: Double = SleepCoordinator.defaultSleepLimit,
                onSleep: @escaping @Sendable (_ prepared: @escaping @Sendable () -> Void) -> Void,
                onWake: @escaping @Sendable () -> Void) {
        self.queue = queue
        self.queueConfinement = QueueConfinement(queue)
        self.busAddress = busAddress
        self.log = log
        self.onSleep = onSleep
        self.onWake = onWake
        self.coordinator = SleepCoordinator(sleepLimit: sleepLimit)
    }

    /// Connects, asks who owns logind's name and takes the inhibitor. Never fails: without a
    /// bus it logs so and stays inert. Callable from any thread.
    public func start() {
        onQueue { connect() }
    }

    /// Releases the inhibitor and disconnects. Callable from any thread.
    public func stop() {
        onQueue { disconnect() }
    }

    /// Whether reachd holds logind's delay inhibitor now.
    public var holdsInhibitor: Bool { onQueue { inhibitor?.rawValue != nil } }

    /// Whether logind is known to run (its name has an owner).
    public var followsLogind: Bool { onQueue { coordinator.owner != nil } }

    // MARK: - Connection

    private func connect() {
        guard connection == nil else { return }
        do {
            connection = try SDBusConnection(address: busAddress, queue: queue, rules: Self.matchRules,
                                             onSignal: { [weak self] in self?.handleSignal($0) },
                                             onRefused: { [weak self] in self?.log.warning("sleep: the bus refused a match rule: \($0)") },
                                             onLost: { [weak self] in self?.lost($0) })
            try call(.nameOwner, destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                     interface: "org.freedesktop.DBus", member: "GetNameOwner", arguments: [Self.service])
        } catch {
            log.info("sleep: no D-Bus system bus (\(error)); sleep and wake are not followed")
            disconnect()
            return
        }
        connection?.pump()
    }

    private func disconnect() {
        connection = nil
        releaseInhibitor()
        sleepLimitTimer?.cancel()
        sleepLimitTimer = nil
        coordinator = SleepCoordinator(sleepLimit: coordinator.sleepLimit)
    }

    /// logind's name owner, and its `PrepareForSleep`. Installed before `GetNameOwner` is sent.
    static let matchRules = [
        "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',"
            + "member='NameOwnerChanged',arg0='\(service)'",
        "type='signal',sender='\(service)',path='\(path)',interface='\(manager)',member='PrepareForSleep'",
    ]

    // MARK: - Dispatch integration

    /// sd-bus failed: the connection is gone.
    private func lost(_ error: SDBusError) {
        log.warning("sleep: lost the D-Bus connection (\(error)); sleep and wake are no longer followed")
        let wasSleeping = coordinator.sleeping
        disconnect()
        // Never left believing the machine sleeps: nothing would ever wake the check again.
        if wasSleeping { onWake() }
    }

    // MARK: - Calls

    /// What a method call in flight is for.
    private enum CallPurpose { case nameOwner, inhibit }

    private func call(_ purpose: CallPurpose, destination: String, path: String, interface: String, member: String,
                      arguments: [String]) throws(SDBusError) {
        try connection?.call(destination: destination, path: path, interface: interface, member: member,
                             arguments: arguments, for: purpose) { [weak self] reply, purpose in self?.handleReply(reply, for: purpose) }
    }

    private func handleReply(_ message: SDBusMessage, for purpose: CallPurpose) {
        switch purpose {
        case .nameOwner:
            if let error = message.error {
                if error.name != "org.freedesktop.DBus.Error.NameHasNoOwner" {
                    log.warning("sleep: GetNameOwner(\(Self.service)) failed: \(error)")
                }
                logAbsent()
                return
            }
            let owner = (try? message.readAll())?.first?.string
            perform(coordinator.ownerChanged(to: owner))
        case .inhibit:
            if let error = message.error {
                log.warning("sleep: logind refused a delay inhibitor (\(error)); sleep is followed without delaying it")
                coordinator.inhibitorFailed()
                return
            }
            guard case .unixFD(let lent)? = (try? message.readAll())?.first else {
                log.warning("sleep: logind's Inhibit answered no file descriptor; sleep is followed without delaying it")
                coordinator.inhibitorFailed()
                return
            }
            // The message owns its descriptor: keep a duplicate of our own.
            do {
                let held = try FileDescriptor.duplicate(lent)
                releaseInhibitor()
                log.debug("sleep: holding logind's delay inhibitor (fd \(held.rawValue))")
                inhibitor = consume held
            } catch {
                log.warning("sleep: cannot keep logind's inhibitor: \(error)")
                coordinator.inhibitorFailed()
                return
            }
            perform(coordinator.inhibitorTaken())
        }
    }

    private func logAbsent() {
        guard !reportedAbsent else { return }
        reportedAbsent = true
        log.info("sleep: logind is not running; sleep and wake are not followed until it starts")
    }

    private func releaseInhibitor() {
        guard let held = inhibitor.take() else { return }
        try? held.close()
        log.debug("sleep: released logind's delay inhibitor")
    }

    // MARK: - Signals

    private func handleSignal(_ message: SDBusMessage) {
        guard let member = message.member else { return }
        if member == "NameOwnerChanged" && message.interface == "org.freedesktop.DBus" {
            // Only the bus itself tells who owns a name; a peer's lookalike is ignored.
            guard message.sender == "org.freedesktop.DBus", message.path == "/org/freedesktop/DBus" else {
                reportForged(member, from: message.sender)
                return
            }
            guard let arguments = try? message.readAll(), arguments.count == 3,
                  arguments[0].string == Self.service, let newOwner = arguments[2].string else { return }
            if newOwner.isEmpty {
                log.info("sleep: logind left the bus")
            } else {
                log.info("sleep: logind is on the bus (\(newOwner)); following sleep and wake")
                reportedAbsent = false
            }
            perform(coordinator.ownerChanged(to: newOwner.isEmpty ? nil : newOwner))
            return
        }
        guard member == "PrepareForSleep", message.interface == Self.manager,
              let start = (try? message.readAll())?.first?.bool else { return }
        guard let owner = coordinator.owner, message.sender == owner else {
            reportForged(member, from: message.sender)
            return
        }
        perform(coordinator.prepareForSleep(start, sender: message.sender, now: MonotonicClock.seconds()))
    }

    private func sleepLimitReached() {
        sleepLimitTimer = nil
        let actions = coordinator.sleepLimitReached(now: MonotonicClock.seconds())
        if actions.contains(.resume) {
            let limit = coordinator.sleepLimit
            let seconds = limit == limit.rounded() ? "\(Int(limit))" : "\(limit)"
            log.notice("sleep: logind announced no wake \(seconds) s (awake time) after PrepareForSleep(true); taking it as a wake")
        }
        perform(actions)
        connection?.pump()
    }

    private func reportForged(_ member: String, from sender: String?) {
        guard !reportedForged else { return }
        reportedForged = true
        log.warning("sleep: ignoring \(member) from \(sender ?? "an unknown sender"), not "
                    + (member == "NameOwnerChanged" ? "the bus" : "logind"))
    }

    // MARK: - Performing the coordinator's actions

    private func perform(_ actions: [SleepCoordinator.Action]) {
        for action in actions {
            switch action {
            case .takeInhibitor:
                do {
                    try call(.inhibit, destination: Self.service, path: Self.path, interface: Self.manager, member: "Inhibit",
                             arguments: ["sleep", "reachd", "Connectivity is marked unknown before sleep", "delay"])
                } catch {
                    log.warning("sleep: cannot ask logind for a delay inhibitor: \(error)")
                    coordinator.inhibitorFailed()
                }
            case .releaseInhibitor:
                releaseInhibitor()
            case .prepareForSleep:
                log.info("sleep: the machine is going to sleep")
                onSleep { [weak self] in
                    guard let self else { return }
                    self.queue.async {
                        self.perform(self.coordinator.sleepPrepared())
                        self.connection?.pump()
                    }
                }
            case .resume:
                log.info("sleep: the machine woke; re-reading links and checking afresh")
                onWake()
            case .armSleepLimit(let seconds):
                sleepLimitTimer?.cancel()
                let timer = DispatchWorkItem { [weak self] in self?.sleepLimitReached() }
                sleepLimitTimer = timer
                queue.asyncAfter(deadline: .now() + seconds, execute: timer)
            }
        }
    }
}
