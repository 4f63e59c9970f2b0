import Foundation

/// A Wi-Fi owner played by one of our dbusmock templates on a `PrivateBus`: iwd
/// (`Tests/python/iwd_reachd.py`) or wpa_supplicant (`Tests/python/wpasupplicant_reachd.py`).
/// `kill()` and `start()` play a crash and a restart; `control` drives the template's control
/// methods through `Tests/python/wifictl.py`.
public final class WiFiOwnerMock: @unchecked Sendable {
    public enum Daemon: String, Sendable {
        case iwd
        case wpaSupplicant = "wpa"

        /// The bus name the daemon owns.
        public var name: String {
            switch self {
            case .iwd: "net.connman.iwd"
            case .wpaSupplicant: "fi.w1.wpa_supplicant1"
            }
        }

        var template: String {
            switch self {
            case .iwd: "\(Paths.packageRoot)/Tests/python/iwd_reachd.py"
            case .wpaSupplicant: "\(Paths.packageRoot)/Tests/python/wpasupplicant_reachd.py"
            }
        }
    }

    public let bus: PrivateBus
    public let daemon: Daemon
    private var process: Child?

    public init(_ daemon: Daemon, bus: PrivateBus, start: Bool = true) throws {
        try Requirement.dbusMock.check()
        try Requirement.busctl.check()
        self.daemon = daemon
        self.bus = bus
        if start { try self.start() }
    }

    /// Starts the mock and waits until it owns the daemon's name.
    public func start() throws {
        process = try bus.startMock(template: daemon.template, owning: daemon.name)
    }

    /// SIGKILL, as a crash: the bus announces the name's loss.
    public func kill() {
        guard let process else { return }
        process.killAndWait()
        self.process = nil
    }

    /// Calls a control method of the template (see the template's documentation and
    /// `wifictl.py`: integers as text, `hex:…` for arbitrary SSID bytes, `TYPE:VALUE` for
    /// variants); returns what it answered, one item a line.
    @discardableResult
    public func control(_ method: String, _ arguments: String...) throws -> [String] {
        let words = [Paths.venvPython, "\(Paths.packageRoot)/Tests/python/wifictl.py", bus.address, daemon.rawValue, method]
            + arguments
        let output = try sh(words.map(shellQuoted).joined(separator: " ")).output
        return output.split(separator: "\n").map(String.init)
    }

    /// `busctl --json=short ARGUMENTS` on the private bus, its JSON decoded (`{"type": …,
    /// "data": …}`); the arguments are passed after `--`, so that negative numbers are values.
    public func busctlJSON(_ command: String, _ arguments: String...) throws -> [String: Any] {
        let words = ["busctl", "--address=\(bus.address)", "--json=short", command, "--"] + arguments
        let output = try sh(words.map(shellQuoted).joined(separator: " ")).output
        guard let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any] else {
            throw MockError(description: "busctl \(command) \(arguments) answered \(output)")
        }
        return object
    }

    /// `busctl ARGUMENTS` on the private bus, as a status and the text it printed (errors too).
    public func busctl(_ command: String, _ arguments: String...) throws -> (status: Int32, output: String) {
        let words = ["busctl", "--address=\(bus.address)", command, "--"] + arguments
        return try sh(words.map(shellQuoted).joined(separator: " "), check: false)
    }

    deinit { kill() }
}

/// `text` as one shell word.
func shellQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}
