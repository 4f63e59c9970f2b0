import FoundationEssentials

/// What a developer asks reachd to play (varlink `Simulate`): the fields to fake. Anything left
/// nil comes from the real status at the moment the simulation starts.
public struct Simulation: Equatable, Sendable {
    public var status: NetworkStatus?
    public var connectivity: Connectivity?
    public var expensive: Bool?
    /// ModemManager's name of a technology (`edge`, `lte`, `5gnr`, …); implies a cellular status.
    public var accessTechnology: String?

    public init(status: NetworkStatus? = nil, connectivity: Connectivity? = nil, expensive: Bool? = nil,
                accessTechnology: String? = nil) {
        self.status = status; self.connectivity = connectivity; self.expensive = expensive
        self.accessTechnology = accessTechnology
    }

    /// A parameter a simulation cannot honour, with why (the `InvalidParameter` varlink error
    /// names `parameter`; logs and `reachctl` show `message`).
    public struct InvalidParameter: Error, Equatable, Sendable, CustomStringConvertible {
        public let parameter: String
        public let message: String

        public init(_ parameter: String, _ message: String) {
            self.parameter = parameter; self.message = message
        }

        public var description: String { "\(parameter): \(message)" }
    }

    /// The ModemManager URL of the modem a simulated cellular status names when the real status
    /// has none.
    public static let simulatedModem = "/org/freedesktop/ModemManager1/Modem/0"
    /// The name of the primary interface a simulated reachable status names when the real status
    /// has none (the machine is offline).
    public static let simulatedInterface = "sim0"
    /// The URL a simulated connectivity check names when no real check ran.
    public static let simulatedProbeURL = "http://connectivity.invalid/"
    /// Where a simulated captive portal redirects to (`.invalid`: it can never resolve).
    public static let simulatedPortalURL = "http://portal.invalid/login"

    /// The technology a simulated cellular status names when none is given: a typical one of
    /// the generation.
    static func defaultTechnology(for status: NetworkStatus) -> String? {
        switch status {
        case .wwan2G: return "edge"
        case .wwan3G: return "hspa"
        case .wwan4G: return "lte"
        case .wwan5G: return "5gnr"
        case .wwan, .notReachable, .unknown, .ethernet, .wifi: return nil
        }
    }

    /// The status the simulation publishes over `real`, or why it cannot.
    ///
    /// A reachable status keeps the real path's interfaces, gateways and address families (a
    /// machine that is offline gets a stand-in primary interface, `sim0`); a status of another
    /// kind changes the primary interface's kind to match. A cellular status gets a cellular
    /// object (the real modem's, or a stand-in). `expensive` follows as for a real status:
    /// cellular or a metered primary interface, unless given. Connectivity and probe keep the
    /// rules of every published status: never reachable with `none`, never unreachable without.
    public func resolve(over real: Status, now: Date) throws(InvalidParameter) -> Status {
        var target = status ?? real.status
        var technology = accessTechnology
        if let name = accessTechnology {
            guard let entry = ModemAccessTechnology.table.first(where: { $0.name == name }) else {
                let names = ModemAccessTechnology.table.map(\.name).joined(separator: ", ")
                throw InvalidParameter("accessTechnology", "unknown technology \"\(name)\" (one of \(names))")
            }
            let implied = entry.generation?.networkStatus ?? .wwan
            if let status {
                guard status.isWWAN else {
                    throw InvalidParameter("accessTechnology", "\(name) is cellular, the status \(status.rawValue) is not")
                }
                guard status == .wwan || status == implied else {
                    throw InvalidParameter("accessTechnology", "\(name) is \(entry.generation?.rawValue ?? "no generation"), not \(status.rawValue)")
                }
            } else {
                target = implied
            }
        } else if target.isWWAN, target != real.status || real.cellular == nil {
            technology = Self.defaultTechnology(for: target)
        } else if target.isWWAN {
            technology = real.cellular?.accessTechnology
        }

        guard target.isReachable else {
            if let connectivity, connectivity != .none {
                throw InvalidParameter("connectivity", "a status that is not reachable has connectivity none, not \(connectivity.rawValue)")
            }
            if expensive == true {
                throw InvalidParameter("expensive", "a status that is not reachable is not expensive")
            }
            var result = Status(status: .notReachable, reachable: false, connectivity: .none, primary: nil, vpn: nil,
                                cellular: nil, expensive: false, ipv4: false, ipv6: false, gateways: [], flags: [],
                                interfaces: real.interfaces, probe: nil, since: now, simulated: true,
                                connectivityCheck: real.connectivityCheck)
            if let url = real.probe?.url {
                result.probe = Probe(url: url, result: .none, error: "not reachable: simulated", checkedAt: now)
            }
            return result
        }
        if connectivity == Connectivity.none {
            throw InvalidParameter("connectivity", "connectivity none means not reachable; simulate notReachable instead")
        }

        var result = real
        result.status = target
        result.reachable = true
        result.simulated = true
        result.since = now
        if !real.reachable {
            result.primary = Interface(name: Self.simulatedInterface, index: 0, kind: .other, up: true, carrier: true,
                                       operstate: "up", addresses: [], metered: false)
            result.vpn = nil
            result.ipv4 = true
            result.ipv6 = false
        }
        if target != real.status || !real.reachable, var primary = result.primary {
            primary.kind = Self.kind(of: target, real: primary.kind)
            result.primary = primary
        }
        if target.isWWAN {
            let generation = ModemAccessTechnology.Generation.allCases.first { $0.networkStatus == target }
            result.cellular = Cellular(generation: generation?.rawValue, accessTechnology: technology,
                                       modem: real.cellular?.modem ?? Self.simulatedModem,
                                       interface: result.primary?.name,
                                       signalQuality: real.cellular?.signalQuality ?? 60,
                                       roaming: real.cellular?.roaming ?? false)
        } else {
            result.cellular = nil
        }
        result.expensive = expensive ?? (target.isWWAN || result.primary?.metered == true)
        // A played 2G is a slow link: the path's quality is what the played technology usually
        // gives (as at link-up), not the real link's, so an app can be tried on it.
        if target != real.status || !real.reachable {
            result.linkQuality = Self.typicalQuality(of: target, kind: result.primary?.kind ?? .other, now: now)
        }
        var flags = Set(real.flags)
        flags.insert(.reachable)
        flags.remove(.connectionRequired)
        if target.isWWAN { flags.insert(.isWWAN) } else { flags.remove(.isWWAN) }
        if result.vpn == nil { flags.remove(.transientConnection) }
        result.flags = ReachabilityFlag.allCases.filter { flags.contains($0) }

        let realConnectivity: Connectivity = real.reachable ? real.connectivity : .unknown
        let verdict = connectivity ?? realConnectivity
        if verdict != realConnectivity || !real.reachable {
            result.connectivity = verdict
            result.probe = Self.probe(verdict, url: real.probe?.url, now: now)
            // A simulated verdict is each family's with a path: the two internets agree.
            result.ipv4Connectivity = result.ipv4 ? verdict : .none
            result.ipv6Connectivity = result.ipv6 ? verdict : .none
            // A simulated verdict stands for a check's, even where the real check is off.
            result.connectivityCheck = true
        }
        return result
    }

    /// The class a link of `status` usually has (`LinkTechnology.typicalType`), marked `default`.
    static func typicalQuality(of status: NetworkStatus, kind: InterfaceKind, now: Date) -> LinkQuality? {
        let generation = ModemAccessTechnology.Generation.allCases.first { $0.networkStatus == status }
        let technology = LinkTechnology(kind: kind, generation: generation)
        guard let type = technology.typicalType else { return nil }
        let level = LinkQualityEstimator.Configuration().level(type: type, loss: .low, radioLevel: nil)
        return LinkQuality(level: level, effectiveType: type, source: .default, measuredAt: now)
    }

    private static func kind(of status: NetworkStatus, real: InterfaceKind) -> InterfaceKind {
        switch status {
        case .ethernet: return .ethernet
        case .wifi: return .wifi
        case .wwan, .wwan2G, .wwan3G, .wwan4G, .wwan5G: return .wwan
        case .unknown: return .other
        case .notReachable: return real
        }
    }

    /// A probe with the given verdict, as a check would have reported it; nil for `unknown`
    /// (not checked).
    private static func probe(_ verdict: Connectivity, url: String?, now: Date) -> Probe? {
        let url = url ?? simulatedProbeURL
        switch verdict {
        case .unknown: return nil
        case .none: return Probe(url: url, result: .none, error: "not reachable: simulated", checkedAt: now)
        case .portal: return Probe(url: url, result: .portal, httpStatus: 302, portalUrl: simulatedPortalURL, checkedAt: now)
        case .limited: return Probe(url: url, result: .limited, error: "simulated: no answer", checkedAt: now)
        case .full: return Probe(url: url, result: .full, httpStatus: 204, checkedAt: now)
        }
    }
}

/// A `Simulate` call's parameters, checked: either a reset, or a simulation with its lifetime.
public struct SimulateRequest: Equatable, Sendable {
    /// nil: `reset: true`.
    public var simulation: Simulation?
    /// How long the simulation lasts; nil: until reset or hang-up (only with `whileConnected`).
    public var seconds: Int?
    public var whileConnected: Bool

    /// How long a simulation lasts when the caller gives neither `seconds` nor `whileConnected`,
    /// so that a forgotten one ends by itself.
    public static let defaultSeconds = 300
    /// The longest simulation: a day.
    public static let maximumSeconds = 86_400

    public init(simulation: Simulation?, seconds: Int?, whileConnected: Bool) {
        self.simulation = simulation; self.seconds = seconds; self.whileConnected = whileConnected
    }

    public static let parameterNames: Set<String> = ["status", "connectivity", "expensive", "accessTechnology",
                                                     "seconds", "whileConnected", "reset"]

    /// Checks the parameters of a `Simulate` call. Every error names the parameter at fault.
    public static func parse(_ parameters: [String: JSONValue]) throws(Simulation.InvalidParameter) -> SimulateRequest {
        if let unknown = parameters.keys.sorted().first(where: { !parameterNames.contains($0) }) {
            throw Simulation.InvalidParameter(unknown, "no such parameter")
        }
        func present(_ key: String) -> JSONValue? {
            guard let value = parameters[key], !value.isNull else { return nil }
            return value
        }
        func bool(_ key: String) throws(Simulation.InvalidParameter) -> Bool? {
            guard let value = present(key) else { return nil }
            guard let flag = value.boolValue else { throw Simulation.InvalidParameter(key, "not a boolean") }
            return flag
        }
        func string(_ key: String) throws(Simulation.InvalidParameter) -> String? {
            guard let value = present(key) else { return nil }
            guard let text = value.stringValue else { throw Simulation.InvalidParameter(key, "not a string") }
            return text
        }
        var simulation = Simulation()
        if let name = try string("status") {
            guard let status = NetworkStatus(rawValue: name) else {
                throw Simulation.InvalidParameter("status", "unknown status \"\(name)\" (one of \(NetworkStatus.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            simulation.status = status
        }
        if let name = try string("connectivity") {
            guard let connectivity = Connectivity(rawValue: name) else {
                throw Simulation.InvalidParameter("connectivity", "unknown connectivity \"\(name)\" (one of \(Connectivity.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            simulation.connectivity = connectivity
        }
        simulation.expensive = try bool("expensive")
        simulation.accessTechnology = try string("accessTechnology")
        var seconds: Int?
        if let value = present("seconds") {
            guard let number = value.intValue else { throw Simulation.InvalidParameter("seconds", "not an integer") }
            guard (1...maximumSeconds).contains(number) else {
                throw Simulation.InvalidParameter("seconds", "\(number) is not between 1 and \(maximumSeconds)")
            }
            seconds = number
        }
        let whileConnected = try bool("whileConnected") ?? false
        if try bool("reset") == true {
            for key in ["status", "connectivity", "expensive", "accessTechnology", "seconds", "whileConnected"] where present(key) != nil {
                throw Simulation.InvalidParameter(key, "reset takes no other parameter")
            }
            return SimulateRequest(simulation: nil, seconds: nil, whileConnected: false)
        }
        guard simulation != Simulation() else {
            throw Simulation.InvalidParameter("status", "nothing to simulate: give a status, connectivity, expensive or accessTechnology, or reset")
        }
        if seconds == nil && !whileConnected { seconds = defaultSeconds }
        return SimulateRequest(simulation: simulation, seconds: seconds, whileConnected: whileConnected)
    }
}

/// Who may simulate: root, and members of `[Simulation] Group=`.
public enum SimulationPermission {
    /// - Parameters:
    ///   - uid: the caller's user (from `SO_PEERCRED`).
    ///   - groups: the caller's primary group and the supplementary groups of its user.
    ///   - allowedGroup: the group id of `[Simulation] Group=`; nil: root only.
    public static func allows(uid: UInt32, groups: [UInt32], allowedGroup: UInt32?) -> Bool {
        if uid == 0 { return true }
        guard let allowedGroup else { return false }
        return groups.contains(allowedGroup)
    }
}
