import Dispatch
import FoundationEssentials
import ReachabilityCore

/// Follows the Wi-Fi owners on the system bus — NetworkManager's Wi-Fi devices, iwd's stations,
/// wpa_supplicant's interfaces — and reports each Wi-Fi device as its owners see it, arbitrated
/// by `WiFiOwnerArbiter` (`[WiFiDevice]`, sorted by interface name).
///
/// Built as `ModemManagerSource` is: one `BusFollower` per service on a `SystemBus` (shared, or
/// its own), each reading its service afresh on every (re)connection and when its name gets a
/// new owner, believing signals only from that owner, and forgetting what it said when it
/// leaves or the bus goes. NetworkManager and iwd are read from their ObjectManagers;
/// wpa_supplicant, which has none, with `GetAll` of its main object, of the interfaces it lists
/// and of their current BSS. iwd publishes no signal as a property, and wpa_supplicant's BSS
/// signal is a scan's: while a station is connected the source asks iwd's
/// `StationDiagnostic.GetDiagnostics` and wpa_supplicant's `SignalPoll` at once and then every
/// `pollInterval` seconds. iwd allows one signal-level agent per station: the source registers
/// one for each station (`agentPath`, with the bar edges `WiFiSignalScale.iwdAgentLevels`), so
/// that iwd tells it the moment the bars change, and it reads that station's figures then.
/// Given a `kernel` reader (nl80211, `NL80211Reader`), it also reads the kernel's view of each
/// managed-mode interface, off the queue, with the owners' figures and every tick while the
/// kernel has nl80211: a device no daemon manages is reported as the kernel sees it (owner
/// `nl80211`), and a daemon's station lacking figures (NetworkManager publishes no dBm) is
/// completed from it for the same access point (`WiFiStation.filling(from:)`).
/// `onChange` runs on `queue`, only when the list changed.
public final class WiFiOwnerSource: @unchecked Sendable, QueueConfined {
    public let queue: DispatchQueue
    private let bus: SystemBus
    private let ownsBus: Bool
    private let log: LogSink
    private let pollInterval: TimeInterval
    private let onChange: @Sendable ([WiFiDevice]) -> Void
    package let queueConfinement: QueueConfinement
    /// Reads the kernel's stations (blocking; run off the queue); nil: not read.
    public typealias KernelReader = @Sendable () -> Result<[String: WiFiStation], NL80211Reader.Failure>
    private let kernel: KernelReader?

    // Confined to `queue`.
    private let networkManager: BusFollower<Call>
    private let iwd: BusFollower<Call>
    private let wpa: BusFollower<Call>
    private var networkManagerModel = NetworkManagerWiFiModel()
    private var iwdModel = IWDModel()
    private var wpaModel = WPASupplicantModel()
    private var published: [WiFiDevice] = []
    private var timer: DispatchSourceTimer?
    private var reportedGarbage: Set<String> = []
    /// iwd's stations the agent is registered with (or was offered to), by device path.
    private var agentStations: Set<String> = []
    /// Between `start()` and `stop()`: nothing is asked of an owner outside it.
    private var running = false
    /// The kernel's stations by interface name (nl80211), as last read.
    private var kernelStations: [String: WiFiStation] = [:]
    private var kernelReading = false
    /// The kernel has no nl80211: it is not asked again.
    private var kernelAbsent = false
    private var reportedKernelFailure = false

    /// The object path of reachd's signal-level agent (net.connman.iwd.SignalLevelAgent).
    public static let agentPath = "/io/reachd/SignalLevelAgent"
    static let agentInterface = "net.connman.iwd.SignalLevelAgent"

    /// What a call in flight is for.
    enum Call: Hashable {
        case managedObjects
        case diagnostics(String)
        case getAll(String, String)
        case signalPoll(String)
        case registerAgent(String)
    }

    /// - Parameters:
    ///   - queue: the serial queue the source runs on; `onChange` runs on it.
    ///   - busAddress: a D-Bus address instead of the system bus (tests); nil: the system bus.
    ///   - pollInterval: seconds between two readings of a connected station's signal.
    ///   - onChange: every Wi-Fi device an owner reports, after each change.
    public convenience init(queue: DispatchQueue, busAddress: String? = nil, pollInterval: TimeInterval = 10,
                            log: LogSink = .discarding, kernel: KernelReader? = nil,
                            onChange: @escaping @Sendable ([WiFiDevice]) -> Void) {
        self.init(bus: SystemBus(address: busAddress, queue: queue, log: log, label: "Wi-Fi", followed: "the Wi-Fi owners"),
                  owningIt: true, pollInterval: pollInterval, log: log, kernel: kernel, onChange: onChange)
    }

    /// A source over `bus`, shared with other followers (reachd's); it runs on the bus's queue,
    /// and `start()` and `stop()` leave the bus to its owner.
    public convenience init(bus: SystemBus, pollInterval: TimeInterval = 10, log: LogSink = .discarding,
                            kernel: KernelReader? = nil, onChange: @escaping @Sendable ([WiFiDevice]) -> Void) {
        self.init(bus: bus, owningIt: false, pollInterval: pollInterval, log: log, kernel: kernel, onChange: onChange)
    }

    private init(bus: SystemBus, owningIt: Bool, pollInterval: TimeInterval, log: LogSink, kernel: KernelReader?,
                 onChange: @escaping @Sendable ([WiFiDevice]) -> Void) {
        self.kernel = kernel
        self.queue = bus.queue
        self.bus = bus
        self.ownsBus = owningIt
        self.log = log
        self.pollInterval = max(pollInterval, 0.05)
        self.onChange = onChange
        self.queueConfinement = QueueConfinement(bus.queue)
        let properties = "interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"
        networkManager = BusFollower(bus: bus, label: "NetworkManager (Wi-Fi)", service: NetworkManagerDBus.service, rules: [
            "type='signal',sender='\(NetworkManagerDBus.service)',path='\(NetworkManagerDBus.objectManagerPath)',"
                + "interface='org.freedesktop.DBus.ObjectManager'",
            "type='signal',sender='\(NetworkManagerDBus.service)',\(properties),path_namespace='\(NetworkManagerWiFiModel.objectsPath)'",
        ], log: log)
        iwd = BusFollower(bus: bus, label: "iwd", service: IWDModel.service, rules: [
            "type='signal',sender='\(IWDModel.service)',path='\(IWDModel.objectManagerPath)',interface='org.freedesktop.DBus.ObjectManager'",
            "type='signal',sender='\(IWDModel.service)',\(properties),path_namespace='\(IWDModel.objectsPath)'",
        ], log: log)
        wpa = BusFollower(bus: bus, label: "wpa_supplicant", service: WPASupplicantModel.service, rules: [
            "type='signal',sender='\(WPASupplicantModel.service)',path='\(WPASupplicantModel.path)',interface='\(WPASupplicantModel.mainInterface)'",
            "type='signal',sender='\(WPASupplicantModel.service)',\(properties),path_namespace='\(WPASupplicantModel.path)'",
        ], log: log)
        wire(networkManager, reset: { $0.networkManagerModel.mirror.reset() }, read: { $0.readObjectManager($0.networkManager, path: NetworkManagerDBus.objectManagerPath) })
        wire(iwd, reset: { $0.iwdModel.reset(); $0.agentStations = [] },
             read: { $0.readObjectManager($0.iwd, path: IWDModel.objectManagerPath) })
        iwd.served = (Self.agentPath, { [weak self] message in self?.agentCalled(message) ?? false })
        wire(wpa, reset: { $0.wpaModel.reset() }, read: { $0.readWPASupplicant() })
        networkManager.onSignal = { [weak self] message in
            guard let self, let (member, path, arguments) = Self.decode(message) else { return }
            // NetworkManager's figures come with its signals: nothing to read of iwd or wpa_supplicant.
            if self.networkManagerModel.mirror.apply(signal: member, path: path, arguments: arguments) { self.changed(readFigures: false) }
        }
        iwd.onSignal = { [weak self] message in
            guard let self, let (member, path, arguments) = Self.decode(message) else { return }
            if self.iwdModel.mirror.apply(signal: member, path: path, arguments: arguments) { self.changed() }
        }
        wpa.onSignal = { [weak self] message in
            guard let self, let (member, path, arguments) = Self.decode(message) else { return }
            if self.wpaModel.apply(signal: member, path: path, arguments: arguments) { self.changed() }
        }
    }

    /// The common part of each follower: read on connection and on a new owner, forget on loss.
    private func wire(_ follower: BusFollower<Call>, reset: @escaping (WiFiOwnerSource) -> Void,
                      read: @escaping (WiFiOwnerSource) -> Void) {
        follower.onConnected = { [weak self] in
            guard let self else { return }
            read(self)
        }
        follower.onOwnerChanged = { [weak self] newOwner in
            guard let self else { return }
            reset(self)
            if let newOwner {
                self.log.info("\(follower.label) appeared on the bus (\(newOwner)); reading its Wi-Fi devices")
                read(self)
            } else {
                self.log.info("\(follower.label) left the bus; its Wi-Fi devices are forgotten")
            }
            self.changed()
        }
        follower.onLost = { [weak self] in
            guard let self else { return }
            reset(self)
            self.changed()
        }
    }

    /// Follows the owners from now on (when the bus is up); never fails.
    public func start() {
        onQueue {
            running = true
            networkManager.start(); iwd.start(); wpa.start()
            if ownsBus { bus.start() }
            readKernel()
        }
    }

    /// Stops following and reports no Wi-Fi device (when there were some).
    public func stop() {
        onQueue {
            running = false
            unregisterAgent()
            networkManager.stop(); iwd.stop(); wpa.stop()
            if ownsBus { bus.stop() }
            networkManagerModel = NetworkManagerWiFiModel()
            iwdModel.reset()
            wpaModel.reset()
            kernelStations = [:]
            changed()
        }
    }

    /// The devices last reported.
    public var devices: [WiFiDevice] { onQueue { published } }

    // MARK: Reading

    private static func decode(_ message: SDBusMessage) -> (String, String, [DBusValue])? {
        guard let member = message.member, let path = message.path, let arguments = try? message.readAll() else { return nil }
        return (member, path, arguments)
    }

    private func readObjectManager(_ follower: BusFollower<Call>, path: String) {
        do {
            try follower.call(.managedObjects, path: path, interface: "org.freedesktop.DBus.ObjectManager",
                              member: "GetManagedObjects") { [weak self] reply, _ in
                self?.managedObjects(reply, of: follower)
            }
        } catch {
            log.warning("\(follower.label): cannot call GetManagedObjects: \(error)")
        }
    }

    private func managedObjects(_ reply: SDBusMessage, of follower: BusFollower<Call>) {
        var mirror = DBusObjectMirror()
        if let error = reply.error {
            follower.owner = nil
            if error.name != "org.freedesktop.DBus.Error.ServiceUnknown" && error.name != "org.freedesktop.DBus.Error.NameHasNoOwner" {
                log.warning("\(follower.label): GetManagedObjects failed: \(error)")
            }
        } else {
            follower.owner = reply.sender
            if mirror.apply(managedObjects: (try? reply.readAll()) ?? []) {
                reportedGarbage.remove(follower.label)
            } else if reportedGarbage.insert(follower.label).inserted {
                log.warning("\(follower.label): GetManagedObjects answered something that is not a{oa{sa{sv}}}; no Wi-Fi devices")
            }
        }
        if follower === networkManager { networkManagerModel.mirror = mirror } else { iwdModel.mirror = mirror }
        changed()
    }

    /// wpa_supplicant: who owns the name first (its signals count only from the owner), then
    /// the properties of everything `wanted` names.
    private func readWPASupplicant() {
        do {
            try wpa.askOwner(.managedObjects) { [weak self] owner in
                guard let self else { return }
                self.wpa.owner = owner
                if owner != nil { self.requestWanted() }
            }
        } catch {
            log.warning("wpa_supplicant: cannot ask who owns its name: \(error)")
        }
    }

    private func requestWanted() {
        let pending = Set(wpa.callsInFlight.compactMap { call -> String? in
            if case let .getAll(path, _) = call { return path }
            return nil
        })
        for (path, interface) in wpaModel.wanted where !pending.contains(path) {
            do {
                try wpa.call(.getAll(path, interface), path: path, interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                             values: [.string(interface)]) { [weak self] reply, _ in
                    guard let self else { return }
                    if reply.error == nil {
                        self.wpaModel.apply(getAll: (try? reply.readAll()) ?? [], path: path, interface: interface)
                    }
                    self.changed()
                }
            } catch {
                log.warning("wpa_supplicant: cannot read \(path): \(error)")
            }
        }
    }

    // MARK: iwd's signal-level agent

    /// Registers the agent with each iwd station that does not have it yet (once per station
    /// and iwd: a refusal, such as another agent already there, is not retried).
    private func registerAgent() {
        let stations = Set(iwdModel.mirror.objects.compactMap { path, interfaces in
            interfaces[IWDModel.stationInterface] != nil ? path : nil
        })
        agentStations.formIntersection(stations)
        let levels = DBusValue.array(WiFiSignalScale.iwdAgentLevels.map(DBusValue.int16))
        for path in stations.sorted() where !agentStations.contains(path) {
            agentStations.insert(path)
            do {
                try iwd.call(.registerAgent(path), path: path, interface: IWDModel.stationInterface, member: "RegisterSignalLevelAgent",
                             values: [.objectPath(Self.agentPath), levels]) { [weak self] reply, _ in
                    if let error = reply.error {
                        self?.log.info("iwd: \(path) refused reachd's signal-level agent (\(error)); its signal is read every few seconds")
                    }
                }
            } catch {
                log.warning("iwd: cannot register the signal-level agent with \(path): \(error)")
            }
        }
    }

    /// Takes the agent back from every station (stopping; iwd also forgets it when reachd leaves the bus).
    private func unregisterAgent() {
        for path in agentStations.sorted() {
            try? iwd.call(.registerAgent(path), path: path, interface: IWDModel.stationInterface, member: "UnregisterSignalLevelAgent",
                          values: [.objectPath(Self.agentPath)]) { _, _ in }
        }
        agentStations = []
        // Sent before the follower stops and its calls are let go.
        iwd.flush()
    }

    /// A call of iwd's (its current owner's: `BusFollower` checked) to the agent: `Changed(o
    /// device, y level)` reads that station's figures now; `Release(o device)` forgets it.
    private func agentCalled(_ message: SDBusMessage) -> Bool {
        guard message.interface == Self.agentInterface, let member = message.member,
              let arguments = try? message.readAll(), let device = arguments.first?.objectPath else { return false }
        switch member {
        case "Changed":
            readDiagnostics(device)
            return true
        case "Release":
            agentStations.remove(device)
            return true
        default:
            return false
        }
    }

    // MARK: The kernel (nl80211)

    /// Reads the kernel's stations off the queue (unless a read is under way, or the kernel has
    /// no nl80211); the answer is taken on the queue.
    private func readKernel() {
        guard running, let kernel, !kernelAbsent, !kernelReading else { return }
        kernelReading = true
        DispatchQueue.global(qos: .utility).async { [weak self] in
            let result = kernel()
            self?.queue.async { [weak self] in self?.kernelAnswered(result) }
        }
    }

    private func kernelAnswered(_ result: Result<[String: WiFiStation], NL80211Reader.Failure>) {
        kernelReading = false
        guard running else { return }
        switch result {
        case .success(let stations):
            kernelStations = stations
            reportedKernelFailure = false
        case .failure(.absent):
            kernelAbsent = true
            kernelStations = [:]
            log.debug("Wi-Fi: \(NL80211Reader.Failure.absent); only the Wi-Fi owners on the bus are read")
        case .failure(let failure):
            kernelStations = [:]
            if !reportedKernelFailure { log.warning("Wi-Fi: cannot read nl80211: \(failure)") }
            reportedKernelFailure = true
        }
        publish()
        armTimer()
    }

    // MARK: Signal readings

    /// Asks each connected station's figures, unless a question is already out. `pump`: send
    /// them now (outside sd-bus's callbacks; inside, they go when the callback returns).
    private func poll(pump: Bool) {
        let out = Set(iwd.callsInFlight + wpa.callsInFlight)
        for path in iwdModel.connectedDevices where !out.contains(.diagnostics(path)) { readDiagnostics(path) }
        readKernel()
        for path in wpaModel.connectedInterfaces where !out.contains(.signalPoll(path)) {
            try? wpa.call(.signalPoll(path), path: path, interface: WPASupplicantModel.interfaceInterface,
                          member: "SignalPoll") { [weak self] reply, _ in
                guard let self else { return }
                self.wpaModel.apply(signalPoll: reply.error == nil ? try? reply.readAll() : nil, path: path)
                self.publish()
            }
        }
        if pump {
            iwd.pump()
            wpa.pump()
        }
    }

    /// Asks iwd for one station's diagnostics (unless that question is out already).
    private func readDiagnostics(_ path: String) {
        guard iwdModel.connectedDevices.contains(path), !iwd.callsInFlight.contains(.diagnostics(path)) else { return }
        try? iwd.call(.diagnostics(path), path: path, interface: IWDModel.diagnosticInterface,
                      member: "GetDiagnostics") { [weak self] reply, _ in
            guard let self else { return }
            self.iwdModel.apply(diagnostics: reply.error == nil ? try? reply.readAll() : nil, path: path)
            self.publish()
        }
    }

    /// The poll timer runs while a station is connected.
    private func armTimer() {
        // The kernel is read every tick while it has nl80211: a connection no daemon reports
        // shows nowhere else.
        let wanted = running && (!iwdModel.connectedDevices.isEmpty || !wpaModel.connectedInterfaces.isEmpty
            || (kernel != nil && !kernelAbsent))
        if !wanted {
            timer?.cancel()
            timer = nil
            return
        }
        guard timer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + pollInterval, repeating: pollInterval, leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in self?.poll(pump: true) }
        timer.resume()
        self.timer = timer
    }

    // MARK: Publishing

    /// After a model changed: what is newly wanted is asked, a station that connected (or
    /// moved) is read at once, and the devices are published.
    private func changed(readFigures: Bool = true) {
        iwdModel.pruneDiagnostics()
        guard running else {
            timer?.cancel()
            timer = nil
            return publish()
        }
        if iwd.owner != nil { registerAgent() }
        if wpa.owner != nil { requestWanted() }
        // A station connected, roamed or its owner said something: its figures now, not at the
        // next tick (a BSS's new scan signal would otherwise lose to an older poll's). Asked
        // before publishing, so that a roam waits for the new access point's figures.
        if readFigures { poll(pump: false) } else { readKernel() }
        publish()
        armTimer()
    }

    /// Publishes the devices as the owners describe them, once nothing asked of them is
    /// awaited: a roam is published with the new access point's figures (its BSS, its signal),
    /// not first without them and then with them, which would be two events.
    private func publish() {
        let awaiting = (iwd.callsInFlight + wpa.callsInFlight).contains { call in
            switch call {
            case .managedObjects, .registerAgent: false
            case .getAll, .diagnostics, .signalPoll: true
            }
        }
        if awaiting || kernelReading { return }
        var claims: [String: [WiFiOwnerClaim]] = [:]
        for (name, claim) in networkManagerModel.claims { claims[name, default: []].append(claim) }
        for (name, claim) in iwdModel.claims { claims[name, default: []].append(claim) }
        for (name, claim) in wpaModel.claims { claims[name, default: []].append(claim) }
        for (name, station) in kernelStations {
            claims[name, default: []].append(WiFiOwnerClaim(owner: .nl80211, state: .connected, station: station))
        }
        let devices = WiFiDevice.arbitrate(claims).map { device in
            // A daemon's station completed from the kernel's, for the same access point only.
            guard device.owner != .nl80211, let station = device.station, let measured = kernelStations[device.interface] else { return device }
            var completed = device
            completed.station = station.filling(from: measured)
            return completed
        }
        guard devices != published else { return }
        published = devices
        onChange(devices)
    }
}

extension WiFiOwnerSource {
    /// A source that feeds `monitor` (`setWiFi(_:)`), over `bus` (shared, on the monitor's
    /// queue), which its owner starts and stops; `kernel` reads nl80211 (reachd: `NL80211Reader`).
    public convenience init(monitor: ReachabilityMonitor, bus: SystemBus, pollInterval: TimeInterval = 10,
                            log: LogSink = .discarding, kernel: KernelReader? = nil) {
        self.init(bus: bus, pollInterval: pollInterval, log: log, kernel: kernel) { [weak monitor] devices in
            monitor?.setWiFi(devices)
        }
    }

    /// Like `init(monitor:bus:pollInterval:log:kernel:)`, on a bus of its own.
    public convenience init(monitor: ReachabilityMonitor, busAddress: String? = nil, pollInterval: TimeInterval = 10,
                            log: LogSink = .discarding, kernel: KernelReader? = nil) {
        self.init(queue: monitor.queue, busAddress: busAddress, pollInterval: pollInterval, log: log,
                  kernel: kernel) { [weak monitor] devices in
            monitor?.setWiFi(devices)
        }
    }
}
