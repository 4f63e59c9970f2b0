import FoundationEssentials
import ReachabilityCore

/// NWInterface.InterfaceType's cases, from reachd's interface kinds.
public enum InterfaceType: String, Sendable, Hashable, CaseIterable {
    case wifi
    case cellular
    case wiredEthernet
    case loopback
    /// Tunnels (VPN), virtual devices, and kinds reachd cannot tell.
    case other

    /// `ethernet`, `bridge` → `.wiredEthernet`; `wwan` → `.cellular`; `vpn`, `virtual`, `other` → `.other`.
    public init(_ kind: InterfaceKind) {
        switch kind {
        case .ethernet, .bridge: self = .wiredEthernet
        case .wifi: self = .wifi
        case .wwan: self = .cellular
        case .loopback: self = .loopback
        case .vpn, .virtual, .other: self = .other
        }
    }
}

/// One interface of a path (NWInterface's shape).
public struct NetworkInterface: Sendable, Hashable, CustomStringConvertible {
    public let name: String
    public let index: Int
    public let type: InterfaceType
    /// reachd's finer kind (`vpn`, `bridge`, …).
    public let kind: InterfaceKind

    public init(_ interface: Interface) {
        name = interface.name; index = interface.index; kind = interface.kind; type = InterfaceType(interface.kind)
    }

    public var description: String { name }
}

/// What a network's captive portal says about itself: the RFC 8910 API its routers announce
/// and, once the API answered (RFC 8908), where to log in and what is left of the session.
public struct CaptivePortal: Sendable, Equatable {
    /// The API's URI, from the router advertisement.
    public let apiURL: String
    /// The API's verdict: true while captive; nil until it answered (or when it failed).
    public let isCaptive: Bool?
    /// Where the user logs in (`user-portal-url`).
    public let portalURL: String?
    /// The venue's page (`venue-info-url`).
    public let venueInfoURL: String?
    /// Seconds left of the session when it was checked (`checkedAt`).
    public let secondsRemaining: Int?
    public let bytesRemaining: Int?
    public let canExtendSession: Bool?
    /// When the API was asked.
    public let checkedAt: Date?

    /// The portal of `interface` as `probe` (the check over it) describes it; nil when its
    /// network announces no API.
    public init?(interface: Interface?, probe: Probe?) {
        guard let api = interface?.captivePortalApi else { return nil }
        apiURL = api
        let answered = probe?.source == CaptivePortalAPI.source ? probe : nil
        isCaptive = answered.map { $0.result == .portal }
        portalURL = answered?.result == .portal ? answered?.portalUrl : nil
        venueInfoURL = answered?.venueInfoUrl
        secondsRemaining = answered?.secondsRemaining
        bytesRemaining = answered?.bytesRemaining
        canExtendSession = answered?.canExtendSession
        checkedAt = answered?.checkedAt
    }
}

/// NWPath's shape: the machine's path to the network, made from reachd's `Status`.
public struct Path: Sendable, Equatable, CustomStringConvertible {
    /// NWPath.Status.
    public enum Status: String, Sendable, Hashable {
        /// A usable path exists (reachd: `reachable`).
        case satisfied
        /// No usable path.
        case unsatisfied
        /// A link is up with carrier but has no address or route yet (`connectionRequired`).
        case requiresConnection
    }

    public let status: Status
    /// Interfaces the path can use, the one traffic takes first: a VPN on top, the primary
    /// interface, then every other non-loopback interface that is up with carrier and addresses.
    public let availableInterfaces: [NetworkInterface]
    /// Cellular, or a metered interface (configured, or guessed from its DHCP lease's
    /// `ANDROID_METERED` or by NetworkManager, as reachd.conf(5) says).
    public let isExpensive: Bool
    /// Low Data Mode (NWPath.isConstrained): the primary interface is configured as constrained
    /// (`[Interfaces] Constrained=` in reachd.conf); apps should save data. False in-process.
    public let isConstrained: Bool
    public let supportsIPv4: Bool
    public let supportsIPv6: Bool
    /// reachd resolves no names itself; true when the path is satisfied.
    public let supportsDNS: Bool
    /// The primary interface's default gateways.
    public let gateways: [String]

    // reachd's extras.
    /// The status value of the iOS reachability classes (`.wifi`, `.wwan4G`, …).
    public let networkStatus: NetworkStatus
    /// Does the internet answer (`.full`, `.portal`, `.limited`, …; `.unknown` in-process).
    public let connectivity: Connectivity
    /// Each family's own verdict, beside `supportsIPv4` / `supportsIPv6`: `.none` without a
    /// path in that family; `connectivity` is the better of the two.
    public let ipv4Connectivity: Connectivity
    public let ipv6Connectivity: Connectivity
    /// The modem behind a cellular path.
    public let cellular: Cellular?
    /// The primary interface and the VPN on top, as reachd reports them.
    public let primary: Interface?
    public let vpn: Interface?
    /// What the network of the path's interface announces about its captive portal; nil when
    /// nothing (see docs/captive-portal.md).
    public let captivePortal: CaptivePortal?
    /// DNS servers, search domains and the NAT64 prefix the primary's routers announce.
    public let dnsServers: [String]
    public let searchDomains: [String]
    public let nat64Prefix: String?
    /// How good the path is, measured from the traffic that crosses it (NWPath.linkQuality's
    /// `unknown`, `minimal`, `moderate`, `good`); `.unknown` until reachd knows.
    public let linkQuality: LinkQuality.Level
    /// The web's `navigator.connection.effectiveType` for the path (`slow-2g`, `2g`, `3g`, `4g`):
    /// the 2G/3G/4G the path behaves like, whatever its radio; nil until measured.
    public let effectiveType: LinkQuality.EffectiveType?
    /// The measurement behind both (RTT, loss, throughput, the radio's signal); nil until known.
    public let quality: LinkQuality?
    /// The apps' traffic over the path goes unanswered (a data stall, docs/connectivity.md):
    /// the evidence on the primary interface, or on the VPN on top of it; nil otherwise. Only
    /// reachd's check moves `connectivity`: a stalled path may still say `.full` until the
    /// check it triggers answers, so an app that would rather wait reads this too.
    public let stall: DataStall?
    /// True while `stall` is set: the primary or the VPN carries traffic that nothing answers.
    public var isStalled: Bool { stall != nil }
    /// The primary's Wi-Fi connection as its owner (iwd, NetworkManager, wpa_supplicant)
    /// reports it: the network's name, band, signal in dBm, bars (0–4), rate; nil when the path
    /// is not Wi-Fi or not connected. `bssid` is nil unless the app runs as root.
    public let wifi: WiFi?

    /// The path of `status`; with `requiredInterfaceType`, only interfaces of that type count.
    public init(_ status: ReachabilityCore.Status, requiredInterfaceType: InterfaceType? = nil) {
        var available: [NetworkInterface] = []
        var names = Set<String>()
        func add(_ interface: Interface?) {
            guard let interface, !names.contains(interface.name) else { return }
            names.insert(interface.name)
            available.append(NetworkInterface(interface))
        }
        add(status.vpn)
        add(status.primary)
        for interface in status.interfaces
        where interface.kind != .loopback && interface.up && interface.carrier && !interface.addresses.isEmpty {
            add(interface)
        }

        var pathStatus: Status
        if status.reachable {
            pathStatus = .satisfied
        } else if status.flags.contains(.connectionRequired) {
            pathStatus = .requiresConnection
        } else {
            pathStatus = .unsatisfied
        }
        if let required = requiredInterfaceType {
            available = available.filter { $0.type == required }
            if pathStatus == .satisfied && available.isEmpty { pathStatus = .unsatisfied }
        }

        self.status = pathStatus
        availableInterfaces = available
        isExpensive = status.expensive
        ipv4Connectivity = status.ipv4Connectivity
        ipv6Connectivity = status.ipv6Connectivity
        isConstrained = status.constrained
        supportsIPv4 = status.ipv4 && pathStatus == .satisfied
        supportsIPv6 = status.ipv6 && pathStatus == .satisfied
        supportsDNS = pathStatus == .satisfied
        gateways = pathStatus == .satisfied ? status.gateways : []
        networkStatus = pathStatus == .satisfied ? status.status : .notReachable
        connectivity = status.connectivity
        cellular = status.cellular
        primary = status.primary
        vpn = status.vpn
        captivePortal = CaptivePortal(interface: status.vpn ?? status.primary, probe: status.probe)
        dnsServers = status.primary?.dns ?? []
        searchDomains = status.primary?.searchDomains ?? []
        nat64Prefix = status.primary?.nat64Prefix
        quality = pathStatus == .satisfied ? status.linkQuality : nil
        linkQuality = quality?.level ?? .unknown
        effectiveType = quality?.effectiveType
        stall = pathStatus == .satisfied ? status.pathStall : nil
        wifi = pathStatus == .satisfied ? status.primary?.wifi : nil
    }

    /// Nothing known yet (a monitor that has not heard from its source).
    static let initial = Path(.initial(since: Date()))

    /// True when traffic on this path goes over an interface of `type`: the primary interface,
    /// or the VPN on top of it (`.other`).
    public func usesInterfaceType(_ type: InterfaceType) -> Bool {
        guard status == .satisfied else { return false }
        if let primary, InterfaceType(primary.kind) == type { return true }
        if let vpn, InterfaceType(vpn.kind) == type { return true }
        return false
    }

    public var description: String {
        var parts = [status.rawValue, networkStatus.rawValue]
        if !availableInterfaces.isEmpty { parts.append("interfaces: " + availableInterfaces.map(\.name).joined(separator: ",")) }
        if isExpensive { parts.append("expensive") }
        if supportsIPv4 { parts.append("IPv4") }
        if supportsIPv6 { parts.append("IPv6") }
        parts.append("internet: \(connectivity.rawValue)")
        if let quality { parts.append("quality: \(quality.summary)") }
        if let stall { parts.append(stall.summary) }
        return parts.joined(separator: " ")
    }
}
