import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The package root, from this file's path (Tests/ReachabilityLinuxTests/…).
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

/// The venv python that `scripts/deps.sh` sets up with python-dbusmock.
let venvPython = "\(packageRoot)/.venv/bin/python"

/// Why the D-Bus tests cannot run here, or nil when they can.
var dbusMockUnavailable: String? {
    if !FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") && !FileManager.default.isExecutableFile(atPath: "/bin/dbus-daemon") {
        return "skipped: dbus-daemon is not installed (scripts/deps.sh installs it)"
    }
    guard (try? sh("\(venvPython) -c 'import dbusmock, dbus'", check: false).status) == 0 else {
        return "skipped: no python-dbusmock in .venv (run scripts/deps.sh)"
    }
    return nil
}

struct MockError: Error, CustomStringConvertible { let description: String }

/// A private dbus-daemon for one test, on a Unix socket in a temporary directory: the test's
/// "system bus". Stopped (and the directory removed) by `stop()` or deinit.
final class PrivateBus: @unchecked Sendable {
    let directory: String
    let address: String
    private let process = Process()

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-bus-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let socket = "\(directory)/bus"
        address = "unix:path=\(socket)"
        let config = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>\(address)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """
        try config.write(toFile: "\(directory)/bus.conf", atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.environment = childEnvironment()
        process.arguments = ["--config-file=\(directory)/bus.conf", "--nofork", "--nopidfile"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard waitUntil(timeout: 10, { FileManager.default.fileExists(atPath: socket) }) else {
            stop()
            throw MockError(description: "dbus-daemon made no socket at \(socket)")
        }
    }

    /// True while `name` has an owner on this bus.
    func hasOwner(_ name: String) -> Bool {
        let reply = try? sh("busctl --address=\(address) call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner s \(name)", check: false)
        return reply?.output.contains("true") == true
    }

    func stop() {
        if process.isRunning {
            // SIGKILL: children of a Dispatch worker thread inherit its blocked signals, SIGTERM included.
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }
}

/// The `modemmanager_reachd` dbusmock template running on a `PrivateBus` as ModemManager.
/// `kill()` and `start()` play a ModemManager crash and restart.
final class ModemManagerMock: @unchecked Sendable {
    static let name = "org.freedesktop.ModemManager1"
    let bus: PrivateBus
    private let parameters: String
    private var process: Process?

    init(bus: PrivateBus, garbage: Bool = false, start: Bool = true) throws {
        self.bus = bus
        parameters = garbage ? #"{"Garbage": true}"# : "{}"
        if start { try self.start() }
    }

    /// Starts the mock and waits until it owns ModemManager's name.
    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: venvPython)
        process.arguments = ["-m", "dbusmock", "--system", "--template", "\(packageRoot)/Tests/python/modemmanager_reachd.py",
                             "--parameters", parameters]
        var environment = childEnvironment()
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        guard waitUntil(timeout: 20, { bus.hasOwner(Self.name) }) else {
            kill()
            throw MockError(description: "the dbusmock ModemManager never owned \(Self.name)")
        }
    }

    /// SIGKILL, as a crash: no goodbye, the bus announces the name's loss.
    func kill() {
        guard let process else { return }
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        self.process = nil
    }

    /// Calls a control method of the template through Tests/python/mmctl.py.
    func control(_ method: String, _ arguments: String...) throws {
        try sh(([venvPython, "\(packageRoot)/Tests/python/mmctl.py", bus.address, method] + arguments).joined(separator: " "))
    }

    func addModem(_ index: Int, netPort: String, access: UInt32, registration: UInt32 = 1) throws {
        try control("AddModem", "\(index)", netPort.isEmpty ? "''" : netPort, "\(access)", "\(registration)")
    }

    func setAccessTechnologies(_ index: Int, _ mask: UInt32) throws {
        try control("SetModemProperty", "\(index)", "AccessTechnologies", "u:\(mask)")
    }

    deinit { kill() }
}
