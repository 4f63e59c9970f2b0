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
/// Runs on its bus's queue, a `BusFollower` on a `SystemBus` (shared, or one of its own) as
/// `ModemManagerSource` is. Only signals from the current owner of `org.freedesktop.login1`
/// count, and only the bus itself tells who that is. Without logind (containers) nothing
/// happens and that is logged once at info. When the bus goes, a sleep in progress ends and the
/// inhibitor goes with the connection; when it is back, logind is asked afresh and the
/// inhibitor taken again.
public final class LogindSleepMonitor: @unchecked Sendable, QueueConfined {
    static let service = "org.freedesktop.login1"
    static let path = "/org/freedesktop/login1"
    static let manager = "org.freedesktop.login1.Manager"

    public let queue: DispatchQueue
    package let queueConfinement: QueueConfinement
    private let bus: SystemBus
    /// A bus of its own (started and stopped with the monitor), not a shared one.
    private let ownsBus: Bool
    private let log: LogSink
    private let onSleep: @Sendable (_ prepared: @escaping @Sendable () -> Void) -> Void
    private let onWake: @Sendable () -> Void
    // Everything below is confined to `queue`.
    /// logind on the bus: its owner, the calls in flight.
    private let follower: BusFollower<CallPurpose>
    private var coordinator: SleepCoordinator
    /// The timer of the coordinator's `armSleepLimit`, on `DispatchTime` (`CLOCK_MONOTONIC` on
    /// Linux: it stands still while the machine sleeps, as the limit wants).
    private var sleepLimitTimer: DispatchWorkItem?
    /// The inhibitor's file descriptor (our duplicate of the one logind sent); closed when
    /// released, or with this object.
    private var inhibitor: FileDescriptor?
    private var reportedAbsent = false

    /// - Parameters:
    ///   - busAddress: a D-Bus address to use instead of the system bus (tests); nil: the system
    ///     bus, or `DBUS_SYSTEM_BUS_ADDRESS` when set.
    ///   - onSleep: the machine is about to sleep; call the argument (from any thread) once the
    ///     status says so, and the sleep may go on.
    ///   - onWake: the machine woke.
    ///   - log: what reachd logs about logind; by default nothing (reachd passes its sink).
    ///   - sleepLimit: seconds of `CLOCK_MONOTONIC` after which a `PrepareForSleep(true)` with
    ///     no `false` is taken as a wake (`[Monitor] SleepLimit=`).
    public convenience init(queue: DispatchQueue = DispatchQueue(label: "reachd.logind"), busAddress: String? = nil,
                            log: LogSink = .discarding, sleepLimit: Double = SleepCoordinator.defaultSleepLimit,
                            onSleep: @escaping @Sendable (_ prepared: @escaping @Sendable () -> Void) -> Void,
                            onWake: @escaping @Sendable () -> Void) {
        self.init(bus: SystemBus(address: busAddress, queue: queue, log: log, label: "sleep", followed: "logind"), owningIt: true, log: log, sleepLimit: sleepLimit,
                  onSleep: onSleep, onWake: onWake)
    }

    /// A monitor over `bus`, shared with other followers (reachd's); it runs on the bus's queue,
    /// and `start()` and `stop()` leave the bus to its owner.
    public convenience init(bus: SystemBus, log: LogSink = .discarding, sleepLimit: Double = SleepCoordinator.defaultSleepLimit,
                            onSleep: @escaping @Sendable (_ prepared: @escaping @Sendable () -> Void) -> Void,
                            onWake: @escaping @Sendable () -> Void) {
        self.init(bus: bus, owningIt: false, log: log, sleepLimit: sleepLimit, onSleep: onSleep, onWake: onWake)
    }

    private init(bus: SystemBus, owningIt: Bool, log: LogSink, sleepLimit: Double,
                 onSleep: @escaping @Sendable (_ prepared: @escaping @Sendable () -> Void) -> Void,
                 onWake: @escaping @Sendable () -> Void) {
        self.queue = bus.queue
        self.queueConfinement = QueueConfinement(bus.queue)
        self.bus = bus
        self.ownsBus = owningIt
        self.log = log
        self.onSleep = onSleep
        self.onWake = onWake
        self.coordinator = SleepCoordinator(sleepLimit: sleepLimit)
        follower = BusFollower(bus: bus, label: "sleep", service: Self.service, rules: Self.matchRules, log: log)
        follower.onConnected = { [weak self] in self?.askOwner() }
        follower.onOwnerChanged = { [weak self] in self?.ownerChanged(to: $0) }
        follower.onSignal = { [weak self] in self?.handleSignal($0) }
        follower.onIgnored = { [weak self] message in
            guard let member = message.member else { return }
            self?.follower.reportForged(member, from: message.sender, not: "logind")
        }
        follower.onLost = { [weak self] in self?.lost() }
    }

    /// Follows logind from now on: asks who owns its name and takes the inhibitor (whenever the
    /// bus is up). Never fails. Callable from any thread.
    public func start() {
        onQueue {
            follower.start()
            if ownsBus { bus.start() }
        }
    }

    /// Releases the inhibitor and stops following. Callable from any thread.
    public func stop() {
        onQueue {
            disconnect()
            follower.stop()
            if ownsBus { bus.stop() }
        }
    }

    /// Whether reachd holds logind's delay inhibitor now.
    public var holdsInhibitor: Bool { onQueue { inhibitor?.rawValue != nil } }

    /// Whether logind is known to run (its name has an owner).
    public var followsLogind: Bool { onQueue { coordinator.owner != nil } }

    // MARK: - Connection

    private func disconnect() {
        releaseInhibitor()
        sleepLimitTimer?.cancel()
        sleepLimitTimer = nil
        coordinator = SleepCoordinator(sleepLimit: coordinator.sleepLimit)
    }

    /// logind's `PrepareForSleep` (`BusFollower` adds its name owner's rule). Installed before
    /// `GetNameOwner` is sent.
    static let matchRules = [
        "type='signal',sender='\(service)',path='\(path)',interface='\(manager)',member='PrepareForSleep'",
    ]

    /// The bus is gone (`SystemBus` said so): the inhibitor went with the connection.
    private func lost() {
        let wasSleeping = coordinator.sleeping
        disconnect()
        // Never left believing the machine sleeps: nothing would ever wake the check again.
        if wasSleeping { onWake() }
    }

    /// On every connection: who owns logind's name.
    private func askOwner() {
        do {
            try follower.askOwner(.nameOwner) { [weak self] owner in
                guard let self else { return }
                guard let owner else { return self.logAbsent() }
                self.follower.owner = owner
                self.perform(self.coordinator.ownerChanged(to: owner))
            }
        } catch {
            log.warning("sleep: cannot ask who owns \(Self.service): \(error)")
        }
    }

    /// The bus says logind's name changed hands.
    private func ownerChanged(to newOwner: String?) {
        if let newOwner {
            log.info("sleep: logind is on the bus (\(newOwner)); following sleep and wake")
            reportedAbsent = false
        } else {
            log.info("sleep: logind left the bus")
        }
        follower.owner = newOwner
        perform(coordinator.ownerChanged(to: newOwner))
    }

    // MARK: - Calls

    /// What a method call in flight is for.
    private enum CallPurpose { case nameOwner, inhibit }

    private func handleReply(_ message: SDBusMessage, for purpose: CallPurpose) {
        switch purpose {
        case .nameOwner:
            return   // answered through `BusFollower.askOwner`
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

    /// A `PrepareForSleep` from logind's current owner (`BusFollower` checked the sender).
    private func handleSignal(_ message: SDBusMessage) {
        guard message.member == "PrepareForSleep", message.interface == Self.manager,
              let start = (try? message.readAll())?.first?.bool else { return }
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
        follower.pump()
    }

    // MARK: - Performing the coordinator's actions

    private func perform(_ actions: [SleepCoordinator.Action]) {
        for action in actions {
            switch action {
            case .takeInhibitor:
                do {
                    try follower.call(.inhibit, path: Self.path, interface: Self.manager, member: "Inhibit",
                                      values: ["sleep", "reachd", "Connectivity is marked unknown before sleep", "delay"].map(DBusValue.string)) {
                        [weak self] reply, purpose in self?.handleReply(reply, for: purpose)
                    }
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
                        self.follower.pump()
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
