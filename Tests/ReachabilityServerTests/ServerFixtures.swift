import Foundation
import ReachabilityClient
import ReachabilityCore
import ReachabilityServer
import ReachabilitySystem
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

enum Fixture {
    static func interface(_ name: String, index: Int) -> Interface {
        Interface(name: name, index: index, kind: .ethernet, up: true, carrier: true, operstate: "up",
                  addresses: ["10.0.\(index).2/24", "fd00:\(index)::2/64"], metered: false)
    }

    /// A status with `interfaces` links, reachable over the first when `reachable`.
    static func status(reachable: Bool, connectivity: Connectivity = .unknown, interfaces: Int = 2, gateway: String = "10.0.1.1") -> Status {
        var status = Status.initial(since: Date(timeIntervalSince1970: 1_800_000_000))
        let links = (1...max(1, interfaces)).map { interface("eth\($0)", index: $0 + 1) }
        status.interfaces = links
        if reachable {
            status.status = .ethernet; status.reachable = true; status.connectivity = connectivity
            status.primary = links[0]; status.ipv4 = true; status.gateways = [gateway]; status.flags = [.reachable]
        }
        return status
    }

    /// Now, in whole seconds, so that an event survives the wire's millisecond timestamps unchanged.
    static var now: Date { Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)) }

    static func initial(sequence: Int, status: Status = Fixture.status(reachable: false)) -> ReachabilityEvent {
        ReachabilityEvent(sequence: sequence, timestamp: now, event: .initial, reason: Reason(code: .initial), previous: nil, current: status)
    }

    static func change(sequence: Int, from previous: Status, to current: Status, reason: Reason.Code = .routeAdded) -> ReachabilityEvent {
        ReachabilityEvent(sequence: sequence, timestamp: now, event: .reachabilityChanged,
                          reason: Reason(code: reason, interface: "eth1"), previous: previous, current: current)
    }
}

/// A server on a temporary socket, with `publish` producing alternating statuses.
final class ServerHarness: @unchecked Sendable {
    let directory: String
    let path: String
    let server: ReachabilityServer
    private(set) var sequence: Int
    private(set) var status: Status

    /// - Parameter queue: the server's queue (reachd passes the monitor's); nil: its own.
    init(sequence: Int = 1000, configuration: ReachabilityServer.Configuration = .init(), interfaces: Int = 2,
         queue: DispatchQueue? = nil) throws {
        ProcessSetup.ignoreSIGPIPE()
        ProcessSetup.raiseFileDescriptorLimit()
        directory = try temporaryDirectory()
        path = directory + "/io.reachd.Reachability"
        self.sequence = sequence
        status = Fixture.status(reachable: false, interfaces: interfaces)
        let initial = Fixture.initial(sequence: sequence, status: status)
        if let queue {
            server = ReachabilityServer(initial: initial, configuration: configuration, queue: queue)
        } else {
            server = ReachabilityServer(initial: initial, configuration: configuration)
        }
        try server.listen(at: path)
    }

    /// Publishes a change (reachable flips, or the gateway changes with `gatewayOnly`) and returns it.
    @discardableResult
    func publishChange(gatewayOnly: Bool = false) -> ReachabilityEvent {
        var next = status
        if gatewayOnly {
            next.gateways = [next.gateways.first == "10.0.1.1" ? "10.0.1.254" : "10.0.1.1"]
        } else {
            next = Fixture.status(reachable: !status.reachable, interfaces: status.interfaces.count)
        }
        sequence += 1
        let event = Fixture.change(sequence: sequence, from: status, to: next)
        status = next
        server.publish(event)
        return event
    }

    func connect(timeout: TimeInterval = 10) throws -> VarlinkConnection {
        try VarlinkConnection(socketPath: path, timeout: timeout)
    }

    deinit {
        server.stop()
        rmdir(directory)
    }
}

extension VarlinkConnection {
    func subscribe(after: Int? = nil, statusOnly: Bool = false, changes: [String]? = nil) throws {
        var parameters: [String: JSONValue] = [:]
        if let after { parameters["after"] = .int(after) }
        if statusOnly { parameters["statusOnly"] = .bool(true) }
        if let changes { parameters["changes"] = .array(changes.map { .string($0) }) }
        try send(VarlinkCall(method: "io.reachd.Reachability.Subscribe", parameters: parameters, more: true))
    }

    func nextEvent() throws -> ReachabilityEvent {
        let reply = try receive()
        if let error = reply.error { throw ReachabilityClientError.remote(VarlinkError(error, parameters: reply.parameters)) }
        guard reply.continues else { throw ReachabilityClientError.protocolError("event without continues") }
        return try reply.decode(ReachabilityEvent.self, key: "event")
    }

    /// True when the server closed the connection (reads end of stream).
    func isClosedByPeer() -> Bool {
        do { _ = try receiveMessage(); return false } catch ReachabilityClientError.connectionClosed { return true } catch { return false }
    }
}
