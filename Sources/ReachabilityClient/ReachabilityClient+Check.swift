import Dispatch
import FoundationEssentials
import ReachabilityCore

extension ReachabilityClient {
    /// `Check(host:port:)`: how this machine reaches `host` now. With `port`, reachd picks the
    /// route for TCP to that port and this process then connects to it itself (reachd never
    /// connects for a caller): `tcp` says whether it connected, or was refused — the host
    /// answered, so it is reachable and the port closed — or got no answer within
    /// `connectTimeout` (not reachable).
    ///
    /// Throws `ReachabilityClientError.remote` with `io.reachd.Reachability.HostNotFound` for a
    /// name that does not resolve and `org.varlink.service.InvalidParameter` for a malformed host.
    public func check(host: String, port: Int? = nil, connectTimeout: TimeInterval = 5) async throws -> HostCheck {
        var parameters: [String: JSONValue] = ["host": .string(host)]
        if let port { parameters["port"] = .int(port) }
        let answer = try await call(method: "\(Varlink.reachabilityInterface).Check", parameters: parameters).decode(HostCheck.self, key: "result")
        guard let port else { return answer }
        // connect(2) and poll(2) block: not on the cooperative pool.
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: TCPConnect.complete(answer, port: port, timeout: connectTimeout))
            }
        }
    }
}

extension ReachabilityClient {
    /// `Check(host:)` on the calling thread (no port: nothing is connected).
    public func checkBlocking(host: String) throws -> HostCheck {
        try callBlocking(method: "\(Varlink.reachabilityInterface).Check", parameters: ["host": .string(host)])
            .decode(HostCheck.self, key: "result")
    }
}
