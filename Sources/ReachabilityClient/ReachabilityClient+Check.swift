import ReachabilityCore

extension ReachabilityClient {
    /// `Check(host:port:)`: how this machine reaches `host` now, with a TCP connect to `port`.
    ///
    /// Throws `ReachabilityClientError.remote` with `io.reachd.Reachability.HostNotFound` for a
    /// name that does not resolve and `org.varlink.service.InvalidParameter` for a malformed host.
    public func check(host: String, port: Int? = nil) async throws -> HostCheck {
        var parameters: [String: JSONValue] = ["host": .string(host)]
        if let port { parameters["port"] = .int(port) }
        return try await call(method: "\(Self.interface).Check", parameters: parameters).decode(HostCheck.self, key: "result")
    }
}
