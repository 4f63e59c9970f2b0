import CSystemd
import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityHost

/// Follows NetworkManager on the system bus and reports the interfaces it calls metered (its
/// devices' `Metered` property: `yes`, or its own guess `guess-yes`), for machines where
/// NetworkManager, not systemd-networkd, holds the DHCP leases.
///
/// Built as `ModemManagerSource` is (a `BusFollower` on a `SystemBus`, shared or its own): on
/// every (re)connection one `GetManagedObjects` on NetworkManager's ObjectManager
/// (`/org/freedesktop`), then `InterfacesAdded`/`InterfacesRemoved`, `PropertiesChanged` of its
/// devices and `NameOwnerChanged` of its name. NetworkManager absent (or leaving), or the bus
/// gone, means no interface is metered by it. `onChange` runs on `queue`, only when the list changed.
public final class NetworkManagerMeteredSource: @unchecked Sendable, QueueConfined {
    public let queue: DispatchQueue
    private let bus: SystemBus
    /// A bus of its own (started and stopped with the source), not a shared one.
    private let ownsBus: Bool
    private let log: LogSink
    private let onChange: @Sendable ([String]) -> Void
    package let queueConfinement: QueueConfinement

    // Confined to `queue`.
    private let follower: BusFollower<Void>
    private var model = NetworkManagerMeteredModel()
    private var published: [String] = []
    private var reportedGarbage = false

    /// - Parameters:
    ///   - queue: the serial queue the source runs on; `onChange` runs on it.
    ///   - busAddress: a D-Bus address instead of the system bus (tests); nil: the system bus.
    ///   - onChange: the sorted names of the interfaces NetworkManager calls metered.
    public convenience init(queue: DispatchQueue, busAddress: String? = nil, log: LogSink = .discarding,
                            onChange: @escaping @Sendable ([String]) -> Void) {
        self.init(bus: SystemBus(address: busAddress, queue: queue, log: log, label: "NetworkManager", followed: "NetworkManager"), owningIt: true, log: log, onChange: onChange)
    }

    /// A source over `bus`, shared with other followers (reachd's); it runs on the bus's queue,
    /// and `start()` and `stop()` leave the bus to its owner.
    public convenience init(bus: SystemBus, log: LogSink = .discarding, onChange: @escaping @Sendable ([String]) -> Void) {
        self.init(bus: bus, owningIt: false, log: log, onChange: onChange)
    }

    private init(bus: SystemBus, owningIt: Bool, log: LogSink, onChange: @escaping @Sendable ([String]) -> Void) {
        self.queue = bus.queue
        self.bus = bus
        self.ownsBus = owningIt
        self.log = log
        self.onChange = onChange
        self.queueConfinement = QueueConfinement(bus.queue)
        follower = BusFollower(bus: bus, label: "NetworkManager", service: NetworkManagerDBus.service, rules: Self.matchRules, log: log)
        follower.onConnected = { [weak self] in self?.requestManagedObjects() }
        follower.onOwnerChanged = { [weak self] newOwner in
            guard let self else { return }
            self.model.reset()
            if newOwner == nil { self.publish() } else { self.requestManagedObjects() }
        }
        follower.onSignal = { [weak self] in self?.handleSignal($0) }
        follower.onLost = { [weak self] in
            self?.model.reset()
            self?.publish()
        }
    }

    /// Follows NetworkManager from now on (when the bus is up); never fails (see the type).
    public func start() {
        onQueue {
            self.follower.start()
            if self.ownsBus { self.bus.start() }
        }
    }

    /// Stops following and reports no metered interface (when there were some).
    public func stop() {
        onQueue {
            self.follower.stop()
            if self.ownsBus { self.bus.stop() }
            self.model.reset()
            self.publish()
        }
    }

    /// The names last reported.
    public var meteredInterfaces: [String] { onQueue { published } }

    /// Besides the name owner's (`BusFollower` adds it).
    static let matchRules = [
        "type='signal',sender='\(NetworkManagerDBus.service)',path='\(NetworkManagerDBus.objectManagerPath)',"
            + "interface='org.freedesktop.DBus.ObjectManager'",
        "type='signal',sender='\(NetworkManagerDBus.service)',interface='org.freedesktop.DBus.Properties',"
            + "member='PropertiesChanged',path_namespace='\(NetworkManagerDBus.devicesPath)'",
    ]

    private func requestManagedObjects() {
        do {
            try follower.call((), path: NetworkManagerDBus.objectManagerPath,
                              interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects") { [weak self] reply, _ in
                self?.handleManagedObjects(reply)
            }
        } catch {
            log.warning("NetworkManager: cannot call GetManagedObjects: \(error)")
        }
    }

    private func handleManagedObjects(_ message: SDBusMessage) {
        if let error = message.error {
            follower.owner = nil
            model.reset()
            // Not running is the common case (networkd machines): nothing to say.
            if error.name != "org.freedesktop.DBus.Error.ServiceUnknown" && error.name != "org.freedesktop.DBus.Error.NameHasNoOwner" {
                log.warning("NetworkManager: GetManagedObjects failed: \(error)")
            }
        } else {
            follower.owner = message.sender
            if model.apply(managedObjects: (try? message.readAll()) ?? []) {
                reportedGarbage = false
            } else if !reportedGarbage {
                reportedGarbage = true
                log.warning("NetworkManager: GetManagedObjects answered something that is not a{oa{sa{sv}}}; its metered guess is not used")
            }
        }
        publish()
    }

    /// A signal from NetworkManager's current owner (`BusFollower` checked the sender).
    private func handleSignal(_ message: SDBusMessage) {
        guard let member = message.member, let path = message.path, let arguments = try? message.readAll() else { return }
        if model.apply(signal: member, path: path, arguments: arguments) { publish() }
    }

    private func publish() {
        let names = model.meteredInterfaces
        guard names != published else { return }
        published = names
        onChange(names)
    }
}

extension NetworkManagerMeteredSource {
    /// A source that feeds `monitor` (`setNetworkManagerMetered(_:)`), on the monitor's queue.
    public convenience init(monitor: ReachabilityMonitor, busAddress: String? = nil, log: LogSink = .discarding) {
        self.init(queue: monitor.queue, busAddress: busAddress, log: log) { [weak monitor] names in
            monitor?.setNetworkManagerMetered(names)
        }
    }

    /// Like `init(monitor:busAddress:log:)`, over `bus` (shared, on the monitor's queue), which
    /// its owner starts and stops.
    public convenience init(monitor: ReachabilityMonitor, bus: SystemBus, log: LogSink = .discarding) {
        self.init(bus: bus, log: log) { [weak monitor] names in
            monitor?.setNetworkManagerMetered(names)
        }
    }
}
