import FoundationEssentials
import ReachabilityCore

/// Who is calling: the peer of a connection, as the kernel vouches for it (`SO_PEERCRED`).
public struct VarlinkCaller: Equatable, Sendable {
    /// The server's number for the connection; `hangUpHandler` is told it when it closes.
    public let connection: Int
    public let uid: UInt32
    public let gid: UInt32
    public let pid: Int32

    public init(connection: Int, uid: UInt32, gid: UInt32, pid: Int32) {
        self.connection = connection; self.uid = uid; self.gid = gid; self.pid = pid
    }
}

extension ReachabilityServer {
    /// `Simulate(…)`: the raw parameters and the caller; the handler checks both (permission
    /// first) and completes with the published status or an error.
    public typealias SimulateHandler = @Sendable (_ parameters: [String: JSONValue], _ caller: VarlinkCaller,
                                                  _ completion: @escaping Completion) -> Void
    /// A connection closed (the number of `VarlinkCaller.connection`).
    public typealias HangUpHandler = @Sendable (_ connection: Int) -> Void

    func handleSimulate(_ call: VarlinkCall, on connection: Connection) {
        if let unknown = call.parameters.keys.sorted().first(where: { !SimulateRequest.parameterNames.contains($0) }) {
            return reply(.invalidParameter(unknown), to: call, on: connection)
        }
        guard let handler = simulateHandlerOnQueue else {
            return reply(.methodNotImplemented(call.method), to: call, on: connection)
        }
        guard let peer = connection.peer else { return reply(.permissionDenied, to: call, on: connection) }
        let caller = VarlinkCaller(connection: connection.id, uid: peer.uid, gid: peer.gid, pid: peer.pid)
        let parameters = call.parameters
        runAsync(call, on: connection) { completion in handler(parameters, caller, completion) }
    }
}
