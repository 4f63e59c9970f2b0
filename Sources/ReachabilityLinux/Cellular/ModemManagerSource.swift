import CSystemd
import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityHost
#if canImport(Glibc)
import Glibc
#endif

/// Follows ModemManager on the system bus and reports its modems as `[ModemState]`: which
/// network interfaces belong to a modem, its access technologies, signal quality and roaming.
///
/// Runs entirely on its bus's queue (the monitor's), over a `SystemBus` shared with the other
/// followers or one of its own (`BusFollower`: the bus socket is watched by Dispatch sources;
/// no thread, no polling). Each time the bus answers on a (new) connection it asks
/// `GetManagedObjects` asynchronously, then follows `InterfacesAdded`/`InterfacesRemoved`,
/// `PropertiesChanged` of modems (their `Modem.Signal` figures included) and bearers, and
/// `NameOwnerChanged` for ModemManager's name: when ModemManager leaves the bus the modems are
/// cleared (`onChange([])`), when it comes back they are read again. ModemManager absent, or
/// answering garbage, means no modems; so does a bus that is gone (the bus is retried, and
/// ModemManager read again when it is back).
///
/// The radio's figures (`ModemState.signal`) come from `Modem.Signal`, which ModemManager leaves
/// empty until someone asks for them: the first time the source sees a modem with that
/// interface, and nobody set it up yet, it calls `SetupThresholds` (a report whenever RSSI moves
/// by `signalRSSIThreshold` dB, ModemManager 1.20 and later), and when that fails `Setup` (a
/// reading every `signalRefreshSeconds`). A modem without the interface, or whose setup fails,
/// simply has no signal.
///
/// `onChange` is called on `queue`, only when the list changed.
public final class ModemManagerSource: @unchecked Sendable, QueueConfined {
    public let queue: DispatchQueue
    private let bus: SystemBus
    /// A bus of its own (started and stopped with the source), not a shared one.
    private let ownsBus: Bool
    private let log: LogSink
    private let onChange: @Sendable ([ModemState]) -> Void
    package let queueConfinement: QueueConfinement

    // Everything below is confined to `queue`.
    /// ModemManager on the bus: its owner (signals from others are ignored), the calls in flight.
    private let follower: BusFollower<CallPurpose>
    private var model = ModemManagerModel()
    private var published: [ModemState] = []
    /// Logged conditions, so that each is logged once per occurrence, not per message.
    private var reportedAbsent = false
    private var reportedGarbage = false
    /// The first GetManagedObjects answer (and the bearers it named) has been taken in.
    private var answered = false
    /// Callers of `start(waitingUpTo:)` waiting for that.
    private var answerWaiters: [DispatchSemaphore] = []
    /// Modems whose `Modem.Signal` was set up (or found set up) since ModemManager's current
    /// owner appeared; each is asked once.
    private var signalsSetUp: Set<String> = []

    /// The RSSI change, in dB, that makes a modem report its signal (`SetupThresholds`): about
    /// half the step between two of Android's bars, so that a change of level is reported.
    static let signalRSSIThreshold: UInt32 = 5
    /// The polling period asked with `Setup` when the modem or ModemManager cannot report by
    /// threshold: frequent enough to seed the link's quality, rare enough for the modem.
    static let signalRefreshSeconds: UInt32 = 30

    /// - Parameters:
    ///   - queue: the serial queue that owns the source (the monitor's `queue`); `onChange` runs on it.
    ///   - busAddress: a D-Bus address (`unix:path=…`) to use instead of the system bus (tests);
    ///     nil: the system bus, or `DBUS_SYSTEM_BUS_ADDRESS` when set.
    ///   - log: receives one line per noteworthy condition (bus missing, ModemManager gone or
    ///     back); by default nothing is logged (reachd passes its sink).
    ///   - onChange: receives the complete list of modems after every change.
    public convenience init(queue: DispatchQueue, busAddress: String? = nil,
                            log: LogSink = .discarding,
                            onChange: @escaping @Sendable ([ModemState]) -> Void) {
        self.init(bus: SystemBus(address: busAddress, queue: queue, log: log, label: "ModemManager", followed: "ModemManager"), owningIt: true, log: log, onChange: onChange)
    }

    /// A source over `bus`, shared with other followers (reachd's); it runs on the bus's queue,
    /// and `start()` and `stop()` leave the bus to its owner.
    public convenience init(bus: SystemBus, log: LogSink = .discarding, onChange: @escaping @Sendable ([ModemState]) -> Void) {
        self.init(bus: bus, owningIt: false, log: log, onChange: onChange)
    }

    private init(bus: SystemBus, owningIt: Bool, log: LogSink, onChange: @escaping @Sendable ([ModemState]) -> Void) {
        self.queue = bus.queue
        self.bus = bus
        self.ownsBus = owningIt
        self.log = log
        self.onChange = onChange
        self.queueConfinement = QueueConfinement(bus.queue)
        follower = BusFollower(bus: bus, label: "ModemManager", service: ModemManagerDBus.service, rules: Self.matchRules, log: log)
        follower.onConnected = { [weak self] in self?.requestManagedObjects() }
        follower.onOwnerChanged = { [weak self] in self?.nameOwnerChanged(to: $0) }
        follower.onSignal = { [weak self] in self?.handleSignal($0) }
        follower.onLost = { [weak self] in
            self?.disconnect()
            self?.publish()
        }
    }

    /// Connects and asks ModemManager for its modems; the answer arrives later through `onChange`.
    /// Never fails: without a bus the source logs it and stays inert. Callable from any thread.
    public func start() {
        onQueue { self.connect() }
    }

    /// Like `start()`, then waits until ModemManager's first answer (its modems, or that it is not
    /// running) has been reported through `onChange`, at most `timeout` seconds: started before
    /// the daemon declares itself ready, the first status already knows the cellular facts.
    /// Returns false on timeout (the answer is still taken in when it comes). Never waits when
    /// called on `queue` (the answer needs it).
    @discardableResult
    public func start(waitingUpTo timeout: TimeInterval) -> Bool {
        let semaphore = DispatchSemaphore(value: 0)
        let done: Bool = onQueue {
            self.connect()
            if self.answered || !self.bus.isTrying { return true }
            self.answerWaiters.append(semaphore)
            return false
        }
        if done { return true }
        guard !queueConfinement.isCurrent else { return false }
        return semaphore.wait(timeout: .now() + timeout) == .success
    }

    /// Disconnects, and reports no modems (`onChange([])`, when there were some) so that a
    /// monitor forgets them; nothing more is reported after. Callable from any thread.
    public func stop() {
        onQueue {
            self.follower.stop()
            if self.ownsBus { self.bus.stop() }
            self.disconnect()
            self.publish()
        }
    }

    /// The modems last reported. Callable from any thread, `queue` included.
    public var modems: [ModemState] {
        onQueue { published }
    }

    /// True while connected to a bus (whether or not ModemManager runs), or connecting; false
    /// while the bus is gone and retried.
    public var isConnected: Bool {
        onQueue { bus.isTrying }
    }

    // MARK: - Connection

    private func connect() {
        follower.start()
        if ownsBus { bus.start() }
    }

    private func disconnect() {
        answered = false
        signalAnswerWaiters()
        model.reset()
        signalsSetUp = []
    }

    /// Match rules besides the name owner's (`BusFollower` adds it): ModemManager's ObjectManager
    /// signals, and property changes of its objects (modems and bearers). Installed before
    /// `GetManagedObjects` is sent, so no change between the reply and the first signal is missed.
    static let matchRules = [
        "type='signal',sender='\(ModemManagerDBus.service)',path='\(ModemManagerDBus.path)',"
            + "interface='org.freedesktop.DBus.ObjectManager'",
        "type='signal',sender='\(ModemManagerDBus.service)',interface='org.freedesktop.DBus.Properties',"
            + "member='PropertiesChanged',path_namespace='\(ModemManagerDBus.path)'",
    ]

    // MARK: - Calls

    /// What a method call in flight is for.
    private enum CallPurpose { case managedObjects, bearer(String), signalThresholds(String), signalRate(String) }

    private func call(_ purpose: CallPurpose, path: String, interface: String, member: String,
                      arguments: [DBusValue] = []) throws(SDBusError) {
        try follower.call(purpose, path: path, interface: interface, member: member,
                          values: arguments) { [weak self] reply, purpose in self?.handleReply(reply, for: purpose) }
    }

    private func requestManagedObjects() {
        do {
            try call(.managedObjects, path: ModemManagerDBus.path, interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        } catch {
            log.warning("ModemManager: cannot call GetManagedObjects: \(error)")
        }
    }

    /// Asks for the properties of bearers that modems list and we don't know yet.
    private func requestBearers() {
        let pendingBearers = Set(follower.callsInFlight.compactMap { purpose -> String? in
            if case let .bearer(path) = purpose { return path }
            return nil
        })
        for path in model.unknownBearers where !pendingBearers.contains(path) {
            do {
                try call(.bearer(path), path: path, interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                         arguments: [.string(ModemManagerDBus.bearerInterface)])
            } catch {
                model.apply(bearer: path, getAllReply: nil)
            }
        }
    }

    /// Asks each modem seen for the first time with a `Modem.Signal` interface to report its
    /// figures: `SetupThresholds`, and `Setup` when that fails (`handleReply`). A modem already
    /// set up (its `Rate` or `RssiThreshold` not 0: reachd before a restart, or the user with
    /// mmcli) is left as it is.
    private func setUpSignals() {
        let withSignal = Set(model.modemPaths.filter { model.objects[$0]?[ModemManagerDBus.signalInterface] != nil })
        signalsSetUp.formIntersection(withSignal)   // a modem that goes and comes back is asked again
        for path in model.modemPaths where withSignal.contains(path) && !signalsSetUp.contains(path) {
            signalsSetUp.insert(path)
            let signal = model.objects[path]?[ModemManagerDBus.signalInterface] ?? [:]
            guard (signal["Rate"]?.uint32 ?? 0) == 0, (signal["RssiThreshold"]?.uint32 ?? 0) == 0 else { continue }
            let settings: DBusValue = .array([.dictEntry(.string("rssi-threshold"), .variant(.uint32(Self.signalRSSIThreshold)))])
            do {
                try call(.signalThresholds(path), path: path, interface: ModemManagerDBus.signalInterface,
                         member: "SetupThresholds", arguments: [settings])
            } catch {
                requestSignalRate(path, after: "\(error)")
            }
        }
    }

    /// `Setup(signalRefreshSeconds)`, after `SetupThresholds` failed with `reason`.
    private func requestSignalRate(_ path: String, after reason: String) {
        log.debug("ModemManager: \(path) cannot report its signal by threshold (\(reason)); polling it every \(Self.signalRefreshSeconds) s")
        do {
            try call(.signalRate(path), path: path, interface: ModemManagerDBus.signalInterface, member: "Setup",
                     arguments: [.uint32(Self.signalRefreshSeconds)])
        } catch {
            log.info("ModemManager: \(path) reports no radio signal figures (Setup: \(error))")
        }
    }

    private func handleReply(_ message: SDBusMessage, for purpose: CallPurpose) {
        switch purpose {
        case let .signalThresholds(path):
            // The figures themselves arrive as PropertiesChanged; the reply changes no modem.
            if let error = message.error { requestSignalRate(path, after: "\(error)") }
            return
        case let .signalRate(path):
            if let error = message.error { log.info("ModemManager: \(path) reports no radio signal figures (Setup: \(error))") }
            return
        case .managedObjects:
            answered = true
            if let error = message.error {
                follower.owner = nil
                model.reset()
                if error.name == "org.freedesktop.DBus.Error.ServiceUnknown" || error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
                    if !reportedAbsent { log.info("ModemManager is not running; cellular details unavailable until it starts") }
                    reportedAbsent = true
                } else {
                    log.warning("ModemManager: GetManagedObjects failed: \(error)")
                }
            } else {
                follower.owner = message.sender
                reportedAbsent = false
                let arguments = (try? message.readAll()) ?? []
                if model.apply(managedObjects: arguments) {
                    reportedGarbage = false
                } else if !reportedGarbage {
                    reportedGarbage = true
                    log.warning("ModemManager: GetManagedObjects answered something that is not a{oa{sa{sv}}}; no modems")
                }
            }
        case let .bearer(path):
            model.apply(bearer: path, getAllReply: message.error == nil ? try? message.readAll() : nil)
        }
        changed()
    }

    // MARK: - Signals

    /// A signal from ModemManager's current owner (`BusFollower` checked the sender). Before
    /// GetManagedObjects answered there is no owner, and its reply supersedes any signal.
    private func handleSignal(_ message: SDBusMessage) {
        guard let member = message.member, let path = message.path, let arguments = try? message.readAll() else { return }
        if model.apply(signal: member, path: path, arguments: arguments) {
            changed()
        }
    }

    private func nameOwnerChanged(to newOwner: String?) {
        // The follower cancelled what was pending: it was asked of the previous owner.
        model.reset()
        if let newOwner {
            log.info("ModemManager appeared on the bus (\(newOwner)); reading its modems")
            reportedAbsent = false
            reportedGarbage = false
            signalsSetUp = []   // a new ModemManager knows nothing of what the old one was asked
            requestManagedObjects()
            // Keep the old list until the new owner answers: its reply replaces it.
        } else {
            log.info("ModemManager left the bus; no modems until it comes back")
            reportedAbsent = true
            signalsSetUp = []
            publish()
        }
    }

    // MARK: - Publishing

    /// After the model changed: fetch bearers it now needs, and publish once none is pending.
    private func changed() {
        setUpSignals()
        requestBearers()
        let waitingForBearers = follower.callsInFlight.contains { purpose in
            if case .bearer = purpose { return true }
            return false
        }
        if !waitingForBearers {
            publish()
            if answered { signalAnswerWaiters() }
        }
    }

    private func signalAnswerWaiters() {
        answerWaiters.forEach { $0.signal() }
        answerWaiters = []
    }

    private func publish() {
        let modems = model.modems
        guard modems != published else { return }
        published = modems
        onChange(modems)
    }
}
