import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Reachability
import TestSupport

// Written in the names of the iOS classes the library ports, as their Swift code reads after `import Reachability`: each
// name builds and means what the library's own name means. The checks live in a deprecated
// extension (code in deprecated names is no warning there) and the tests call them through a
// protocol (Swift Testing refuses deprecated tests).

protocol SeedNameChecks: Sendable {
    func hlNumericValues()
    func hlMapping()
    func sampleConstants()
    func notificationNames()
    func classMethods() throws
    func socketAddresses() throws
    func sampleAccessors() throws
    func hlNotifier() async throws
}

struct SeedCode: SeedNameChecks {}

extension SystemTests {
@Suite("The iOS classes' names")
struct SeedNamesTests {
    let seeds: any SeedNameChecks = SeedCode()

    @Test("HLNetWorkStatus keeps its numeric values")
    func hlNumericValues() { seeds.hlNumericValues() }

    @Test("HLNetWorkStatus ↔ NetworkStatus: HLNetWorkReachability's view of every status")
    func hlMapping() { seeds.hlMapping() }

    @Test("the Reachability sample's constants are the library's statuses")
    func sampleConstants() { seeds.sampleConstants() }

    @Test("both notification names are .reachabilityChanged, and an observer of either gets a post of it")
    func notificationNames() { seeds.notificationNames() }

    @Test("the sample's class methods make the same targets as the library's initializers")
    func classMethods() throws { try seeds.classMethods() }

    @Test("reachability(withAddress:) takes a sockaddr: IPv4, IPv6, the zero address, other families")
    func socketAddresses() throws { try seeds.socketAddresses() }

    @Test("connectionRequired() and currentReachabilityStatus() read as the sample's methods",
          .enabled(if: getuid() == 0, "needs root: network namespaces"))
    func sampleAccessors() throws { try seeds.sampleAccessors() }

    @Test("HLNetWorkReachability: startNotifier() → true, kNetWorkReachabilityChangedNotification with the HLNetWorkReachability, once per change",
          .enabled(if: getuid() == 0, "needs root: network namespaces"))
    func hlNotifier() async throws { try await seeds.hlNotifier() }
}
}

@available(*, deprecated, message: "written in the iOS classes' names")
extension SeedCode {
    func hlNumericValues() {
        let values: [(HLNetWorkStatus, UInt)] = [(.notReachable, 0), (.unknown, 1), (.wwan2G, 2), (.wwan3G, 3), (.wwan4G, 4), (.wiFi, 9)]
        for (status, value) in values {
            #expect(status.rawValue == value)
            #expect(HLNetWorkStatus(rawValue: value) == status)
        }
        #expect(HLNetWorkStatus.allCases.count == values.count)
    }

    func hlMapping() {
        let table: [(NetworkStatus, HLNetWorkStatus)] = [
            (.notReachable, .notReachable), (.wifi, .wiFi), (.ethernet, .wiFi), (.unknown, .wiFi),
            (.wwan, .unknown), (.wwan2G, .wwan2G), (.wwan3G, .wwan3G), (.wwan4G, .wwan4G), (.wwan5G, .wwan4G),
        ]
        #expect(Set(table.map(\.0)) == Set(NetworkStatus.allCases))
        for (status, seed) in table {
            #expect(HLNetWorkStatus(status) == seed, "\(status)")
            // Round trip: each HLNetWorkStatus names one library status that maps back to it.
            #expect(HLNetWorkStatus(seed.networkStatus) == seed)
            // Reachable and cellular mean the same in both.
            #expect(seed.networkStatus.isReachable == status.isReachable)
            #expect(seed.networkStatus.isWWAN == status.isWWAN)
        }
    }

    func sampleConstants() {
        #expect(NotReachable == NetworkStatus.notReachable)
        #expect(ReachableViaWiFi == NetworkStatus.wifi)
        #expect(ReachableViaWWAN == NetworkStatus.wwan)
        #expect(ReachableVia2G == NetworkStatus.wwan2G)
        #expect(ReachableVia3G == NetworkStatus.wwan3G)
        #expect(ReachableVia4G == NetworkStatus.wwan4G)
        // The sample's switch reads as it did.
        func label(_ status: NetworkStatus) -> String {
            switch status {
            case NotReachable: return "Access Not Available"
            case ReachableViaWiFi: return "Reachable WiFi"
            case ReachableVia4G: return "Reachable 4G"
            default: return "other"
            }
        }
        #expect(label(.wifi) == "Reachable WiFi" && label(.wwan4G) == "Reachable 4G" && label(.notReachable) == "Access Not Available")
    }

    func notificationNames() {
        #expect(NSNotification.Name(rawValue: kReachabilityChangedNotification) == .reachabilityChanged)
        #expect(NSNotification.Name(rawValue: kNetWorkReachabilityChangedNotification) == .reachabilityChanged)
        #expect(Notification.Name.kReachabilityChangedNotification == .reachabilityChanged)
        #expect(Notification.Name.kNetWorkReachabilityChangedNotification == .reachabilityChanged)

        let center = NotificationCenter()
        let seen = Recorder<String>()
        let sample = center.addObserver(forName: NSNotification.Name(rawValue: kReachabilityChangedNotification), object: nil, queue: nil) { _ in
            seen.append("sample")
        }
        let hl = center.addObserver(forName: .kNetWorkReachabilityChangedNotification, object: nil, queue: nil) { _ in seen.append("hl") }
        center.post(name: .reachabilityChanged, object: nil)
        center.removeObserver(sample)
        center.removeObserver(hl)
        #expect(seen.all.sorted() == ["hl", "sample"])
    }

    func classMethods() throws {
        #expect(Reachability.reachabilityForInternetConnection().target == .defaultRoute)
        #expect(Reachability.forInternetConnection().target == .defaultRoute)
        #expect(Reachability.reachability(withHostName: "example.org").target == .host("example.org"))
        #expect(Reachability(hostName: "example.org").target == .host("example.org"))
        #expect(Reachability(hostName: " ") == nil)                       // the iOS class's nil, not a throw
        #expect(Reachability.reachability(withHostName: "") == nil)
        #expect(Reachability.reachability(withAddress: "192.0.2.1").target == .host("192.0.2.1"))
        #expect(NetworkDetector.sharedInstance === NetworkDetector.shared)
    }

    func socketAddresses() throws {
        var inet = sockaddr_in()
        inet.sin_family = sa_family_t(AF_INET)
        inet.sin_port = UInt16(80).bigEndian
        inet.sin_addr.s_addr = inet_addr("192.0.2.7")
        let v4 = withUnsafePointer(to: &inet) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Reachability.reachability(withAddress: $0) } }
        #expect(v4?.target == .host("192.0.2.7"))
        // The older sample's sockaddr_in form.
        #expect(withUnsafePointer(to: &inet) { Reachability.reachability(withAddress: $0) }?.target == .host("192.0.2.7"))

        var inet6 = sockaddr_in6()
        inet6.sin6_family = sa_family_t(AF_INET6)
        _ = "2001:db8::1".withCString { inet_pton(AF_INET6, $0, &inet6.sin6_addr) }
        let v6 = withUnsafePointer(to: &inet6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Reachability.reachability(withAddress: $0) } }
        #expect(v6?.target == .host("2001:db8::1"))

        // reachabilityForInternetConnection's own zero address: the default route.
        var zero = sockaddr_in()
        zero.sin_family = sa_family_t(AF_INET)
        let any = withUnsafePointer(to: &zero) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Reachability.reachability(withAddress: $0) } }
        #expect(any?.target == .defaultRoute)
        #expect(any?.hostname == nil)
        var zero6 = sockaddr_in6()
        zero6.sin6_family = sa_family_t(AF_INET6)
        #expect(try withUnsafePointer(to: &zero6) { try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { try Reachability(address: $0) } }.target == .defaultRoute)

        var unix = sockaddr_un()
        unix.sun_family = sa_family_t(AF_UNIX)
        #expect(withUnsafePointer(to: &unix) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Reachability.reachability(withAddress: $0) } } == nil)
        #expect(throws: ReachabilityError.self) {
            try withUnsafePointer(to: &unix) { try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { try Reachability(address: $0, source: .auto) } }
        }
    }

    func sampleAccessors() throws {
        let network = try TestNetwork(subnet: 123)
        defer { network.destroy() }
        let reachability: Reachability = Reachability.reachabilityForInternetConnection()
        var configuration = reachability.inProcessConfiguration
        configuration.networkNamespace = network.host.name
        reachability.inProcessConfiguration = configuration
        reachability.inProcessServices = .none
        #expect(reachability.currentReachabilityStatus() == ReachableViaEthernetOrWiFi(reachability))
        #expect(reachability.connectionRequired() == false)

        // Carrier but no address: not reachable, connection required (the sample's flag).
        try network.host.ip("addr flush dev eth0")
        #expect(reachability.currentReachabilityStatus() == NotReachable)
        #expect(reachability.connectionRequired() == true)
        #expect(reachability.connectionRequired() == reachability.isConnectionRequired)
        #expect(reachability.isConnectionRequired == reachability.flags.contains(.connectionRequired))
    }

    /// The library's answer for the test uplink (a veth: ethernet, which the sample had no name for).
    func ReachableViaEthernetOrWiFi(_ reachability: Reachability) -> NetworkStatus { reachability.currentReachabilityStatus }

    func hlNotifier() async throws {
        let network = try TestNetwork(subnet: 124)
        defer { network.destroy() }
        let reach: HLNetWorkReachability = HLNetWorkReachability.reachabilityForInternetConnection()
        var configuration = reach.reachability.inProcessConfiguration
        configuration.networkNamespace = network.host.name
        reach.reachability.inProcessConfiguration = configuration
        reach.reachability.inProcessServices = .none

        let statuses = Recorder<HLNetWorkStatus>()
        let observer = NotificationCenter.default.addObserver(
            forName: NSNotification.Name(rawValue: kNetWorkReachabilityChangedNotification), object: nil, queue: nil
        ) { note in
            // HLNetWorkReachability's handler: the object is the HLNetWorkReachability (never the inner one).
            guard let curReach = note.object as? HLNetWorkReachability else { return statuses.append(.unknown) }
            if curReach === reach { statuses.append(curReach.currentReachabilityStatus()) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        #expect(reach.startNotifier())
        #expect(await eventually { statuses.count == 1 })
        try network.uplink.dropCarrier()
        #expect(await eventually { statuses.count == 2 })
        try network.uplink.restoreCarrier()
        #expect(await eventually { statuses.count == 3 })
        // When stopNotifier() returns nothing runs or will run: the count is final.
        reach.stopNotifier()
        #expect(statuses.all == [.wiFi, .notReachable, .wiFi])
    }
}
