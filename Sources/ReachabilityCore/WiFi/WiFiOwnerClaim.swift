/// What one owner says about one Wi-Fi device: whether it manages it, and the connection it sees.
public struct WiFiOwnerClaim: Equatable, Hashable, Sendable {
    public var owner: WiFiOwner
    public var state: WiFiLinkState
    /// The connection, when the owner reports one.
    public var station: WiFiStation?

    public init(owner: WiFiOwner, state: WiFiLinkState, station: WiFiStation? = nil) {
        self.owner = owner; self.state = state; self.station = station
    }
}
