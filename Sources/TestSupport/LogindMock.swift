import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// python-dbusmock's `logind` template on a `PrivateBus`: owns `org.freedesktop.login1`, hands
/// out inhibitors (a pipe whose other end it watches), and emits `PrepareForSleep` when asked.
public final class LogindMock: @unchecked Sendable {
    public static let name = "org.freedesktop.login1"
    public let bus: PrivateBus
    private var process: Child?

    public init(bus: PrivateBus) throws {
        try Requirement.dbusMock.check()
        try Requirement.busctl.check()
        self.bus = bus
        process = try bus.startMock(template: "logind", owning: Self.name)
    }

    /// Emits `PrepareForSleep(start)` from logind's own connection (the mock's `EmitSignal`).
    public func prepareForSleep(_ start: Bool) throws {
        try sh("busctl --address='\(bus.address)' call \(Self.name) /org/freedesktop/login1 org.freedesktop.DBus.Mock "
               + "EmitSignal sssav org.freedesktop.login1.Manager PrepareForSleep b 1 b \(start)")
    }

    /// The inhibitors logind holds, as `ListInhibitors` reports them: "what who mode" each.
    public func inhibitors() throws -> [String] {
        let output = try sh("busctl --address='\(bus.address)' --json=short call \(Self.name) /org/freedesktop/login1 "
                            + "org.freedesktop.login1.Manager ListInhibitors").output
        guard let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any],
              let data = object["data"] as? [[Any]], let list = data.first as? [[Any]] else {
            throw MockError(description: "ListInhibitors answered \(output)")
        }
        return list.map { entry in
            [0, 1, 3].map { index in index < entry.count ? "\(entry[index])" : "?" }.joined(separator: " ")
        }
    }

    /// SIGKILL, as a crash: the bus announces the name's loss.
    public func kill() {
        guard let process else { return }
        process.killAndWait()
        self.process = nil
    }

    deinit { kill() }
}
