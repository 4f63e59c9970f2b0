import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

// A private dbus-daemon with the dbusmock ModemManager template (Tests/python), for the
// in-process fallback's cellular facts. The same fixture as ReachabilityLinuxTests' (test
// targets cannot share files outside TestSupport).

/// The package root, from this file's path (Tests/ReachabilityTests/…).
let apiPackageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

/// The venv python that `scripts/deps.sh` sets up with python-dbusmock.
let apiVenvPython = "\(apiPackageRoot)/.venv/bin/python"

/// True when dbus-daemon and python-dbusmock are installed (scripts/deps.sh installs both).
let dbusMockAvailable: Bool = {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") else { return false }
    return (try? sh("\(apiVenvPython) -c 'import dbusmock, dbus'", check: false).status) == 0
}()

/// A dbus-daemon on a socket in a temporary directory: the test's "system bus".
final class TestBus: @unchecked Sendable {
    let directory: String
    let address: String
    private let process = Process()

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-api-bus-\(getpid())-\(UUID().uuidString.prefix(8))").path
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
            throw FixtureError("dbus-daemon made no socket at \(socket)")
        }
    }

    func hasOwner(_ name: String) -> Bool {
        let reply = try? sh("busctl --address=\(address) call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner s \(name)", check: false)
        return reply?.output.contains("true") == true
    }

    func stop() {
        if process.isRunning {
            // SIGKILL: children of a Dispatch worker thread inherit its blocked signals, SIGTERM included.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }
}

/// The `modemmanager_reachd` dbusmock template on a `TestBus` as ModemManager. The bus address
/// goes to the mock's own environment only.
final class TestModemManager: @unchecked Sendable {
    static let name = "org.freedesktop.ModemManager1"
    let bus: TestBus
    private var process: Process?

    init(bus: TestBus) throws {
        self.bus = bus
        let process = Process()
        process.executableURL = URL(fileURLWithPath: apiVenvPython)
        process.arguments = ["-m", "dbusmock", "--system", "--template", "\(apiPackageRoot)/Tests/python/modemmanager_reachd.py",
                             "--parameters", "{}"]
        var environment = childEnvironment()
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        guard waitUntil(timeout: 20, { bus.hasOwner(Self.name) }) else {
            stop()
            throw FixtureError("the dbusmock ModemManager never owned \(Self.name)")
        }
    }

    /// Calls a control method of the template through Tests/python/mmctl.py.
    func control(_ method: String, _ arguments: String...) throws {
        try sh(([apiVenvPython, "\(apiPackageRoot)/Tests/python/mmctl.py", bus.address, method] + arguments).joined(separator: " "))
    }

    func addModem(_ index: Int, netPort: String, access: UInt32) throws {
        try control("AddModem", "\(index)", netPort, "\(access)", "1")
    }

    func setAccessTechnologies(_ index: Int, _ mask: UInt32) throws {
        try control("SetModemProperty", "\(index)", "AccessTechnologies", "u:\(mask)")
    }

    func stop() {
        guard let process else { return }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        self.process = nil
    }

    deinit { stop() }
}
