import Foundation
import ReachabilityLinux
import Testing
@testable import Reachability
import TestSupport

extension SystemTests {
/// No reachd anywhere: the library's own ModemManager source and connectivity check give the
/// app what the daemon would — the cellular generation and a captive portal.
@Suite("In-process fallback: ModemManager and the connectivity check", .serialized)
struct InProcessFallbackTests {
    static let noDaemon = "/tmp/reachd-api-no-daemon-\(getpid())/io.reachd.Reachability"

    /// A sysfs root without the namespace's interfaces (the host's /sys describes the host's).
    final class EmptySysfs {
        let root = NSTemporaryDirectory() + "\(TestResources.prefix)api-sysfs-\(UUID().uuidString.prefix(8))"
        init() throws { try FileManager.default.createDirectory(atPath: root + "/class/net", withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    @Test("Reachability, PathMonitor and NetworkDetector without reachd: wwan4G from ModemManager, portal from the check, then 3G and full",
          .needsRoot(), .requires(.dbusDaemon, .dbusMock))
    func modemAndPortal() async throws {
        let network = try TestNetwork(subnet: 121)
        defer { network.destroy() }
        let sysfs = try EmptySysfs()
        let portal = try ProbeServer(in: network.uplinkNamespace, port: 8080, mode: .redirect("http://portal.test/login"))
        defer { portal.stop() }
        let bus = try PrivateBus()
        defer { bus.stop() }
        let modemManager = try ModemManagerMock(bus: bus)
        defer { modemManager.kill() }
        try modemManager.addModem(0, netPort: "eth0", access: ModemAccessTechnology.lte.rawValue)

        var configuration = ReachabilityMonitor.Configuration()
        configuration.networkNamespace = network.host.name
        configuration.sysfsRoot = sysfs.root
        var services = InProcessServices(busAddress: bus.address)
        services.connectivity.url = "http://\(network.uplink.gatewayAddress):8080/generate_204"
        services.connectivity.intervalSeconds = 3600
        services.connectivity.initialBackoff = 0.5

        // Reachability: the first delivery already knows the modem (its first answer is waited for).
        let reachability = try Reachability(source: .auto, socketPath: Self.noDaemon)
        reachability.inProcessConfiguration = configuration
        reachability.inProcessServices = services
        let observed = Observed(reachability)
        try reachability.startNotifier()
        defer { reachability.stopNotifier() }
        #expect(await eventually { observed.callbacks.count >= 1 })
        #expect(observed.callbacks.all.first == Delivery(reachable: true, status: .wwan4G, connection: .cellular))
        #expect(reachability.activeOrigin == .inProcess)
        #expect(reachability.status?.cellular?.generation == "4G")
        #expect(reachability.status?.expensive == true)
        // The connectivity check ran against the test portal: portal, with its login page.
        #expect(await eventually { reachability.status?.connectivity == .portal })
        #expect(reachability.status?.probe?.portalUrl == "http://portal.test/login")
        #expect(portal.requests.contains { $0.hasPrefix("/generate_204") })

        // PathMonitor and NetworkDetector, each with its own in-process monitor, see the same.
        let monitor = PathMonitor(source: .auto, socketPath: Self.noDaemon)
        monitor.inProcessConfiguration = configuration
        monitor.inProcessServices = services
        var paths = monitor.paths.makeAsyncIterator()
        var path = await paths.next()
        while let current = path, current.connectivity != .portal { path = await paths.next() }
        #expect(path?.networkStatus == .wwan4G)
        #expect(path?.usesInterfaceType(.cellular) == true)
        #expect(path?.isExpensive == true)

        let detector = NetworkDetector(source: .auto, socketPath: Self.noDaemon)
        detector.inProcessConfiguration = configuration
        detector.inProcessServices = services
        var changes = detector.connectivityChanges.makeAsyncIterator()
        var connectivity = await changes.next()
        if connectivity == .unknown { connectivity = await changes.next() }
        #expect(connectivity == .portal)
        let verdict = await detector.check()
        #expect(verdict.connectivity == .portal && verdict.statusCode == 302 && !verdict.isReachable)

        // The modem falls back to UMTS: wwan3G, told once.
        try modemManager.setAccessTechnologies(0, ModemAccessTechnology.umts.rawValue)
        #expect(await eventually { observed.callbacks.all.last?.status == .wwan3G })
        path = await paths.next()
        while let current = path, current.networkStatus != .wwan3G { path = await paths.next() }
        #expect(path?.networkStatus == .wwan3G)

        // The user logs in: the check, retrying while portal, finds the internet.
        try portal.set(.noContent)
        #expect(await eventually(timeout: 20) { reachability.status?.connectivity == .full })
        connectivity = await changes.next()
        #expect(connectivity == .full)

        // Each state once, in order: no stale start-up status (the link before the modem was known).
        reachability.stopNotifier()
        #expect(observed.callbacks.all.map(\.status) == [.wwan4G, .wwan3G])
    }

    @Test("the one-shot currentReachabilityStatus asks ModemManager too (no notifier, no daemon)",
          .needsRoot(), .requires(.dbusDaemon, .dbusMock))
    func oneShotKnowsTheModem() throws {
        let network = try TestNetwork(subnet: 122)
        defer { network.destroy() }
        let sysfs = try EmptySysfs()
        let bus = try PrivateBus()
        defer { bus.stop() }
        let modemManager = try ModemManagerMock(bus: bus)
        defer { modemManager.kill() }
        try modemManager.addModem(0, netPort: "eth0", access: ModemAccessTechnology([.umts, .hsdpa]).rawValue)

        let reachability = try Reachability(source: .inProcess, socketPath: Self.noDaemon)
        var configuration = ReachabilityMonitor.Configuration()
        configuration.networkNamespace = network.host.name
        configuration.sysfsRoot = sysfs.root
        reachability.inProcessConfiguration = configuration
        reachability.inProcessServices = InProcessServices(busAddress: bus.address)
        #expect(reachability.currentReachabilityStatus == .wwan3G)

        // Without ModemManager the same link is plain ethernet: the 3G came from the modem.
        reachability.inProcessServices = .none
        #expect(reachability.currentReachabilityStatus == .ethernet)
    }

    /// The in-process feed's statuses say whether its own check runs, as reachd's do.
    @Test("an in-process feed without the connectivity check says the check is off", .needsRoot())
    func checkOffInAnInProcessFeed() async throws {
        let network = try TestNetwork(subnet: 129)
        defer { network.destroy() }
        let sysfs = try EmptySysfs()
        var configuration = ReachabilityMonitor.Configuration()
        configuration.networkNamespace = network.host.name
        configuration.sysfsRoot = sysfs.root
        let reachability = try Reachability(source: .inProcess, socketPath: Self.noDaemon)
        reachability.inProcessConfiguration = configuration
        reachability.inProcessServices = .none
        try reachability.startNotifier()
        defer { reachability.stopNotifier() }
        #expect(await eventually { reachability.status?.reachable == true })
        #expect(reachability.status?.connectivityCheck == false)
        #expect(reachability.status?.connectivity == .unknown)
    }
}
}
