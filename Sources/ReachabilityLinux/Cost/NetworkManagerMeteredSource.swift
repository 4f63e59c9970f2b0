import CSystemd
import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityHost

/// Follows NetworkManager on the system bus and reports the interfaces it calls metered (its
/// devices' `Metered` property: `yes`, or its own guess `guess-yes`), for machines where
/// NetworkManager, not systemd-networkd, holds the DHCP leases.
///
/// Built as `ModemManagerSource` is: on `queue`, one `GetManagedObjects` on NetworkManager's
/// ObjectManager (`/org/freedesktop`), then `InterfacesAdded`/`InterfacesRemoved`,
/// `PropertiesChanged` of its devices and `NameOwnerChanged` of its name. NetworkManager absent
/// (or leaving) means no interface is metered by it; no bus at all is logged once and the source
/// stays inert. `onChange` runs on `queue`, only when the list changed.
public final class NetworkManagerMeteredSource: @unchecked Sendable, QueueConfined {
    public let queue: DispatchQueue
    private let busAddress: String?
    private let log: LogSink
    private let onChange: @Sendable ([String]) -> Void
    package let queueConfinement: QueueConfinement

    // Confined to `queue`.
    private var connection: SDBusConnection<Void>?
    private var owner: String?
    private var model = NetworkManagerMeteredModel()
    private var published: [String] = []
    private var reportedGarbage = false

    /// - Parameters:
    ///   - queue: the serial queue the source runs on; `onChange` runs on it.
    ///   - busAddress: a D-Bus address instead of the system bus (tests); nil: the system bus.
    ///   - onChange: the sorted names of the interfaces NetworkManager calls metered.
    public init(queue: DispatchQueue, busAddress: String? = nil, log: LogSink = .discarding,
                onChange: @escaping @Sendable ([String]) -> Void) {
        self.queue = queue
        self.busAddress = busAddress
        self.log = log
        self.onChange = onChange
        self.queueConfinement = QueueConfinement(queue)
    }

    /// Connects and asks NetworkManager for its devices; never fails (see the type).
    public func start() {
        onQueue { self.connect() }
    }

    /// Disconnects and reports no metered interface (when there were some).
    public func stop() {
        onQueue {
            self.connection = nil
            self.owner = nil
            self.model.reset()
            self.publish()
        }
    }

    /// The names last reported.
    public var meteredInterfaces: [String] { onQueue { published } }

    static let matchRules = [
        "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',"
            + "member='NameOwnerChanged',arg0='\(NetworkManagerDBus.service)'",
        "type='signal',sender='\(NetworkManagerDBus.service)',path='\(NetworkManagerDBus.objectManagerPath)',"
            + "interface='org.freedesktop.DBus.ObjectManager'",
        "type='signal',sender='\(NetworkManagerDBus.service)',interface='org.freedesktop.DBus.Properties',"
            + "member='PropertiesChanged',path_namespace='\(NetworkManagerDBus.devicesPath)'",
    ]

    private func connect() {
        guard connection == nil else { return }
        do {
            connection = try SDBusConnection(address: busAddress, queue: queue, rules: Self.matchRules,
                                             onSignal: { [weak self] in self?.handleSignal($0) },
                                             onRefused: { [weak self] in self?.log.warning("NetworkManager: the bus refused a match rule: \($0)") },
                                             onLost: { [weak self] in self?.lost($0) })
            requestManagedObjects()
        } catch {
            log.info("NetworkManager: no D-Bus system bus (\(error)); its metered guess is not used")
            connection = nil
            return
        }
        connection?.pump()
    }

    private func lost(_ error: SDBusError) {
        log.warning("NetworkManager: lost the D-Bus connection (\(error)); its metered guess is not used")
        connection = nil
        owner = nil
        model.reset()
        publish()
    }

    private func requestManagedObjects() {
        do {
            try connection?.call(destination: NetworkManagerDBus.service, path: NetworkManagerDBus.objectManagerPath,
                                 interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects",
                                 for: ()) { [weak self] reply, _ in self?.handleManagedObjects(reply) }
        } catch {
            log.warning("NetworkManager: cannot call GetManagedObjects: \(error)")
        }
    }

    private func handleManagedObjects(_ message: SDBusMessage) {
        if let error = message.error {
            owner = nil
            model.reset()
            // Not running is the common case (networkd machines): nothing to say.
            if error.name != "org.freedesktop.DBus.Error.ServiceUnknown" && error.name != "org.freedesktop.DBus.Error.NameHasNoOwner" {
                log.warning("NetworkManager: GetManagedObjects failed: \(error)")
            }
        } else {
            owner = message.sender
            if model.apply(managedObjects: (try? message.readAll()) ?? []) {
                reportedGarbage = false
            } else if !reportedGarbage {
                reportedGarbage = true
                log.warning("NetworkManager: GetManagedObjects answered something that is not a{oa{sa{sv}}}; its metered guess is not used")
            }
        }
        publish()
    }

    private func handleSignal(_ message: SDBusMessage) {
        guard let member = message.member, let path = message.path else { return }
        if member == "NameOwnerChanged" && message.interface == "org.freedesktop.DBus" {
            // Only the bus itself says who owns a name (anyone can send a look-alike to us).
            guard message.sender == "org.freedesktop.DBus", path == "/org/freedesktop/DBus",
                  let arguments = try? message.readAll(), arguments.count == 3,
                  arguments[0].string == NetworkManagerDBus.service, let newOwner = arguments[2].string else { return }
            connection?.cancelCalls()
            owner = nil
            model.reset()
            if newOwner.isEmpty {
                publish()
            } else {
                requestManagedObjects()
            }
            return
        }
        guard let owner, message.sender == owner, let arguments = try? message.readAll() else { return }
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
}
