import FoundationEssentials

/// Why the status changed (varlink type `Reason`).
public struct Reason: Codable, Equatable, Hashable, Sendable {
    public enum Code: String, Codable, Sendable, CaseIterable {
        case initial, linkAdded, linkRemoved, linkUp, linkDown, carrierGained, carrierLost,
             addressAdded, addressRemoved, routeAdded, routeRemoved, modemChanged, probeResult,
             resync, configReloaded,
             /// A simulation began, changed or ended (`Simulate`).
             simulation,
             /// A policy routing rule appeared or went (`ip rule`).
             ruleAdded, ruleRemoved,
             /// A route or rule that refuses traffic (`unreachable`, `blackhole`, `prohibit`) now
             /// decides the path: a kill switch holds the machine offline.
             killSwitch,
             /// What a link's routers announce (DNS servers, search domains, NAT64 prefix,
             /// captive-portal API) changed, or ran out.
             routerAdvertisement,
             /// The machine is about to sleep (logind's `PrepareForSleep`): connectivity is
             /// `unknown` until a check after wake.
             sleeping,
             /// The machine woke: links and routes re-read, connectivity checked afresh.
             resumed,
             /// An uplink's measured quality changed class (`LinkQuality.level` or
             /// `effectiveType`); `interface` names the uplink.
             qualityChanged,
             /// What the network says of a link's cost changed: its DHCP lease's metered hint
             /// (`ANDROID_METERED`) or NetworkManager's `Metered`; `detail` says which.
             costChanged,
             /// The apps' traffic over an uplink went unanswered (a data stall), or is answered
             /// again, or the check made because of it answered; `interface` names the uplink.
             dataStall,
             /// A Wi-Fi device moved to another access point of the same network (same SSID,
             /// new BSSID): one event, the path's reachability unchanged.
             roamed,
             /// A Wi-Fi signal moved to another number of bars, on the same access point.
             wifiSignalChanged,
             /// A Wi-Fi device joined, left or switched networks as its owner reports it.
             wifiChanged
    }

    public var code: Code
    public var interface: String?
    public var detail: String?

    public init(code: Code, interface: String? = nil, detail: String? = nil) {
        self.code = code; self.interface = interface; self.detail = detail
    }

    enum CodingKeys: String, CodingKey { case code, interface, detail }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(code, forKey: .code); try c.encode(interface, forKey: .interface)
        try c.encode(detail, forKey: .detail)
    }
}

/// One change of the machine's reachability (varlink type `Event`).
public struct ReachabilityEvent: Codable, Equatable, Sendable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// The first reply of a subscription: the current state, `previous` is nil.
        case initial
        case reachabilityChanged
    }

    public var sequence: Int
    public var timestamp: Date
    public var event: Kind
    public var reason: Reason
    public var previous: Status?
    public var current: Status
    /// The names of the `Status` fields that differ from `previous`, sorted (see
    /// `Status.changes(from:)`); empty for `initial`. Strings, not `Status.Field`, so that a client
    /// keeps the names a newer daemon sends.
    public var changes: [String]

    /// - Parameter changes: by default what `current.changes(from: previous)` says (empty
    ///   without `previous`).
    public init(sequence: Int, timestamp: Date, event: Kind, reason: Reason, previous: Status?, current: Status,
                changes: [Status.Field]? = nil) {
        self.sequence = sequence; self.timestamp = timestamp; self.event = event
        self.reason = reason; self.previous = previous; self.current = current
        let fields = changes ?? previous.map { current.changes(from: $0) } ?? []
        self.changes = fields.map(\.rawValue)
    }

    enum CodingKeys: String, CodingKey { case sequence, timestamp, event, reason, previous, current, changes }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        sequence = try c.decode(Int.self, forKey: .sequence)
        timestamp = try c.decodeTimestamp(forKey: .timestamp)
        event = try c.decode(Kind.self, forKey: .event)
        reason = try c.decode(Reason.self, forKey: .reason)
        let previous = try c.decodeIfPresent(Status.self, forKey: .previous)
        self.previous = previous
        let current = try c.decode(Status.self, forKey: .current)
        self.current = current
        // A daemon from before `changes` existed sends none: derive them as it would have.
        let derived = previous.map { current.changes(from: $0).map(\.rawValue) } ?? []
        changes = try c.decodeIfPresent([String].self, forKey: .changes) ?? derived
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(sequence, forKey: .sequence)
        try c.encode(Timestamp.string(from: timestamp), forKey: .timestamp)
        try c.encode(event, forKey: .event); try c.encode(reason, forKey: .reason)
        try c.encode(previous, forKey: .previous); try c.encode(current, forKey: .current)
        try c.encode(changes, forKey: .changes)
    }
}

/// The JSON coders every module uses, so the wire looks the same everywhere.
public enum WireJSON {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    public static func decoder() -> JSONDecoder { JSONDecoder() }

    /// Encodes `value` as a compact UTF-8 JSON string.
    public static func string<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encoder().encode(value), as: UTF8.self)
    }
}
