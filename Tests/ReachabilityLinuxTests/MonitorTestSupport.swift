import Foundation
import ReachabilityCore
import ReachabilityHost
import ReachabilityLinux
import TestSupport

/// Records every event a monitor emits (observer callback, on the monitor's queue).
final class EventRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [ReachabilityEvent] = []

    init(_ monitor: ReachabilityMonitor) {
        monitor.addObserver { [weak self] event in
            guard let self else { return }
            self.lock.withLock { self.recorded.append(event) }
        }
    }

    var events: [ReachabilityEvent] { lock.withLock { recorded } }

    /// Pairs of consecutive events whose `current` do not differ: duplicates, which must never happen.
    var duplicates: [(Int, Int)] {
        let events = self.events
        guard events.count > 1 else { return [] }
        return (1..<events.count).compactMap { i in
            events[i].current.differs(from: events[i - 1].current) ? nil : (events[i - 1].sequence, events[i].sequence)
        }
    }

    /// Every event has previous == the current of the event before it, and sequences rise by one.
    var isChained: Bool {
        let events = self.events
        guard events.count > 1 else { return true }
        return (1..<events.count).allSatisfy { i in
            events[i].sequence == events[i - 1].sequence + 1 && events[i].previous == events[i - 1].current
        }
    }

    /// The first event after the first `skip` ones whose current status satisfies `predicate`,
    /// waited for up to `timeout` seconds: the monitor publishes its status before it calls its
    /// observers, so a test that has just seen the status may be a moment ahead of the recorder.
    func first(after skip: Int = 0, timeout: TimeInterval = 5, where predicate: (Status) -> Bool) -> ReachabilityEvent? {
        var found: ReachabilityEvent?
        _ = waitUntil(timeout: timeout) {
            found = events.dropFirst(skip).first { predicate($0.current) }
            return found != nil
        }
        return found
    }
}

/// A throw-away sysfs root: `class/net` exists; `mark(_:devtype:)` adds a `uevent`.
final class FakeSysfs {
    let root: String

    init() throws {
        root = NSTemporaryDirectory() + "\(TestResources.prefix)sysfs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root + "/class/net", withIntermediateDirectories: true)
    }

    func mark(_ name: String, devtype: String) throws {
        let dir = "\(root)/class/net/\(name)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "DEVTYPE=\(devtype)\nINTERFACE=\(name)\n".write(toFile: dir + "/uevent", atomically: true, encoding: .utf8)
    }

    func touch(_ name: String, _ file: String) throws {
        let dir = "\(root)/class/net/\(name)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: dir + "/" + file, contents: Data())
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }
}

/// A monitor configuration for a test namespace. The host's /sys describes the host's
/// interfaces, not the namespace's, so tests always give a fake sysfs root.
func monitorConfiguration(_ namespace: TestNamespace, sysfs: FakeSysfs) -> ReachabilityMonitor.Configuration {
    var configuration = ReachabilityMonitor.Configuration()
    configuration.networkNamespace = namespace.name
    configuration.sysfsRoot = sysfs.root
    return configuration
}

/// A tun device attached by a small python process (a tun without a reader has no carrier).
final class TunReader {
    let process: Child

    init(namespace: TestNamespace, name: String) throws {
        let script = """
        import fcntl, struct, os, time
        fd = os.open("/dev/net/tun", os.O_RDWR)
        fcntl.ioctl(fd, 0x400454ca, struct.pack("16sH", b"\(name)", 0x0001 | 0x1000))
        print("attached", flush=True)
        while True:
            try:
                os.read(fd, 65536)
            except OSError:
                time.sleep(0.1)
        """
        process = try namespace.startPython(script)
    }

    /// SIGKILL: children of the test process inherit a mask that blocks SIGTERM.
    func stop() {
        process.killAndWait()
    }

    deinit { stop() }
}

/// Runs `body` with a monitor started in a fresh host namespace, with a second namespace beside
/// it for uplinks and a fake sysfs; then stops the monitor and removes both namespaces.
/// `log` takes the monitor's lines (standard error when nil).
func withStartedMonitor(log: LogSink? = nil,
                        _ body: (_ monitor: ReachabilityMonitor, _ host: TestNamespace, _ network: TestNamespace,
                                 _ sysfs: FakeSysfs) throws -> Void) throws {
    let host = try TestNamespace(tag: "h"), network = try TestNamespace(tag: "n")
    defer { host.destroy(); network.destroy() }
    let sysfs = try FakeSysfs()
    let monitor = ReachabilityMonitor(configuration: monitorConfiguration(host, sysfs: sysfs), log: log ?? .standardError())
    try monitor.start()
    defer { monitor.stop() }
    try body(monitor, host, network, sysfs)
}
