/// A router the primary's traffic goes through, as `Status.gateways` lists it.
struct Router: Hashable, Sendable {
    var family: AddressFamily
    var address: String

    /// `Status.gateways` and `Status.gatewaysOmitted` for distinct `routers`: IPv4 before IPv6, each
    /// family in address order (the order of the kernel's routes moves with every router that
    /// comes and goes), the first `Status.maximumGateways` listed and the rest counted. A link
    /// where a host announces a new router every few milliseconds then costs a bounded status.
    static func bounded(_ routers: [Router]) -> (listed: [String], omitted: Int) {
        // One router (the usual case) needs no order: no address is parsed.
        if routers.count <= 1 { return (routers.map(\.address), 0) }
        let ordered = routers.map { ($0, AddressBits($0.address, family: $0.family)) }.sorted { a, b in
            if a.0.family != b.0.family { return a.0.family == .ipv4 }
            switch (a.1, b.1) {
            case let (x?, y?): return x.high != y.high ? x.high < y.high : (x.low != y.low ? x.low < y.low : a.0.address < b.0.address)
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return a.0.address < b.0.address
            }
        }
        let listed = ordered.prefix(Status.maximumGateways).map(\.0.address)
        return (listed, ordered.count - listed.count)
    }
}
