import Foundation
import ReachabilitySystem
#if canImport(Glibc)
import Glibc
#endif

public struct MockError: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// A private dbus-daemon for one test, on a Unix socket in a temporary directory: the test's
/// "system bus". Stopped (and the directory removed) by `stop()` or deinit.
public final class PrivateBus: @unchecked Sendable {
    public let directory: String
    public let address: String
    private var process: Child?

    /// - Parameter everyUser: accept connections from every uid (a daemon under test running as
    ///   `nobody`), not only from the test's own.
    public init(everyUser: Bool = false) throws {
        try Requirement.dbusDaemon.check()
        directory = try temporaryDirectory()
        // Open to every user, as the machine's bus is: a daemon under test as `nobody` reaches the socket.
        guard chmod(directory, 0o755) == 0 else { throw Errno.current("chmod", path: directory) }
        let socket = "\(directory)/bus"
        address = "unix:path=\(socket)"
        let config = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>\(address)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">\(everyUser ? "\n    <allow user=\"*\"/>" : "")
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """
        try config.write(toFile: "\(directory)/bus.conf", atomically: true, encoding: .utf8)
        do {
            try launch()
        } catch {
            stop()
            throw error
        }
    }

    private func launch() throws {
        let socket = "\(directory)/bus"
        process = try startChild("/usr/bin/dbus-daemon", ["--config-file=\(directory)/bus.conf", "--nofork", "--nopidfile"],
                                 andWaitFor: socket, timeout: 10)
        guard process != nil else {
            throw MockError(description: "dbus-daemon made no socket at \(socket)")
        }
    }

    /// SIGKILL to the dbus-daemon, as a crash: every connection drops, every name is lost (the
    /// services on it are left running, without a bus). `restart()` brings it back.
    public func kill() {
        process?.killAndWait()
        process = nil
        try? FileManager.default.removeItem(atPath: "\(directory)/bus")
    }

    /// A new dbus-daemon on the same address, after `kill()`; no service owns a name on it.
    public func restart() throws {
        kill()
        try launch()
    }

    /// True while `name` has an owner on this bus.
    public func hasOwner(_ name: String) -> Bool {
        let reply = try? sh("busctl --address=\(address) call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner s \(name)", check: false)
        return reply?.output.contains("true") == true
    }

    public func stop() {
        process?.killAndWait()
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }
}

extension PrivateBus {
    /// Starts python-dbusmock with `template` on this bus as its system bus, and waits until it
    /// owns `name` (killing it when it never does).
    public func startMock(template: String, parameters: [String] = [], owning name: String) throws -> Child {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
        let process = try Child(Paths.venvPython, ["-m", "dbusmock", "--system", "--template", template] + parameters,
                                environment: environment, output: .discard, error: .discard)
        guard waitUntil(timeout: 20, { hasOwner(name) }) else {
            process.killAndWait()
            throw MockError(description: "the dbusmock \(template) never owned \(name)")
        }
        return process
    }
}

/// The `modemmanager_reachd` dbusmock template running on a `PrivateBus` as ModemManager.
/// `kill()` and `start()` play a ModemManager crash and restart.
public final class ModemManagerMock: @unchecked Sendable {
    public static let name = "org.freedesktop.ModemManager1"
    public let bus: PrivateBus
    private let parameters: String
    private var process: Child?

    /// - Parameters:
    ///   - garbage: GetManagedObjects answers a string instead of the object tree.
    ///   - setupThresholds: modems' `Modem.Signal` has `SetupThresholds` (ModemManager 1.20 and
    ///     later); false: only `Setup`, and `SetupThresholds` answers UnknownMethod.
    ///   - signalInterface: modems have the `Modem.Signal` interface at all.
    public init(bus: PrivateBus, garbage: Bool = false, setupThresholds: Bool = true, signalInterface: Bool = true,
                start: Bool = true) throws {
        try Requirement.dbusMock.check()
        try Requirement.busctl.check()
        self.bus = bus
        parameters = #"{"Garbage": \#(garbage), "NoSetupThresholds": \#(!setupThresholds), "NoSignal": \#(!signalInterface)}"#
        if start { try self.start() }
    }

    /// Starts the mock and waits until it owns ModemManager's name.
    public func start() throws {
        process = try bus.startMock(template: "\(Paths.packageRoot)/Tests/python/modemmanager_reachd.py",
                                    parameters: ["--parameters", parameters], owning: Self.name)
    }

    /// SIGKILL, as a crash: no goodbye, the bus announces the name's loss.
    public func kill() {
        guard let process else { return }
        process.killAndWait()
        self.process = nil
    }

    /// Calls a control method of the template through Tests/python/mmctl.py; returns what it
    /// answered, one item a line.
    @discardableResult
    public func control(_ method: String, _ arguments: String...) throws -> [String] {
        try control(method, arguments)
    }

    private func control(_ method: String, _ arguments: [String]) throws -> [String] {
        let output = try sh(([Paths.venvPython, "\(Paths.packageRoot)/Tests/python/mmctl.py", bus.address, method] + arguments)
            .joined(separator: " ")).output
        return output.split(separator: "\n").map(String.init)
    }

    /// Sets modem `index`'s `Modem.Signal` figures of one technology (`Lte`, `Nr5g`, `Umts`,
    /// `Gsm`, `Cdma`, `Evdo`), e.g. `["rsrp": -125, "rsrq": -15]`, replacing the previous ones;
    /// empty: the technology reports nothing. ModemManager announces it with PropertiesChanged.
    public func setSignal(_ index: Int, _ technology: String, _ figures: [String: Double]) throws {
        _ = try control("SetSignal", ["\(index)", technology] + figures.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
    }

    /// The `Modem.Signal` set-up calls modem `index` received, in order: `"Setup 30"`,
    /// `"SetupThresholds rssi-threshold=5"` (settings sorted by key).
    public func signalSetupCalls(_ index: Int) throws -> [String] {
        try control("SignalSetupCalls", "\(index)")
    }

    public func addModem(_ index: Int, netPort: String, access: UInt32, registration: UInt32 = 1) throws {
        try control("AddModem", "\(index)", netPort.isEmpty ? "''" : netPort, "\(access)", "\(registration)")
    }

    public func setAccessTechnologies(_ index: Int, _ mask: UInt32) throws {
        try control("SetModemProperty", "\(index)", "AccessTechnologies", "u:\(mask)")
    }

    deinit { kill() }
}
