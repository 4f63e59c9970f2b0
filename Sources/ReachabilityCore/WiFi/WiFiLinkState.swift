/// A Wi-Fi owner's view of one device, in the few states the arbiter and the monitor need, read
/// from each owner's own vocabulary.
public enum WiFiLinkState: String, CaseIterable, Equatable, Hashable, Sendable {
    /// The owner does not manage the device (NetworkManager's `unmanaged`, a device iwd or
    /// wpa_supplicant does not know, or a state it cannot name).
    case unmanaged
    /// Managed, not connected (also scanning, failed, going down).
    case disconnected
    /// Managed, on the way to a connection (authentication, association, handshakes, addresses).
    case connecting
    /// Connected to a network.
    case connected
    /// Connected and moving to another access point of the same network (iwd's `roaming`): still
    /// connected, so that a roam does not read as a loss.
    case roaming

    /// True when the owner manages the device.
    public var manages: Bool { self != .unmanaged }

    /// True while a network is joined (`connected` or `roaming`).
    public var isConnected: Bool {
        switch self {
        case .connected, .roaming: true
        case .unmanaged, .disconnected, .connecting: false
        }
    }

    /// From iwd's `Station.State` (nil: the device has no Station interface, iwd does not run it
    /// as a station).
    public init(iwdStationState state: String?) {
        switch state {
        case nil: self = .unmanaged
        case "connected"?: self = .connected
        case "roaming"?: self = .roaming
        case "connecting"?: self = .connecting
        default: self = .disconnected   // "disconnected", "disconnecting", names iwd may add
        }
    }

    /// From wpa_supplicant's `Interface.State` (nil: wpa_supplicant has no interface for the
    /// device).
    public init(wpaSupplicantState state: String?) {
        switch state {
        case nil, "interface_disabled"?: self = .unmanaged
        case "completed"?: self = .connected
        case "authenticating"?, "associating"?, "associated"?, "4way_handshake"?, "group_handshake"?: self = .connecting
        default: self = .disconnected   // "disconnected", "inactive", "scanning", "unknown"
        }
    }

    /// From NetworkManager's `Device.State` (NMDeviceState): 0 unknown and 10 unmanaged are not
    /// managed; 20 unavailable, 30 disconnected, 110 deactivating and 120 failed are not
    /// connected; 40–90 (prepare … secondaries) are on the way; 100 is activated.
    public init(networkManagerDeviceState state: UInt32) {
        switch state {
        case 100: self = .connected
        case 40...90: self = .connecting
        case 20, 30, 110, 120: self = .disconnected
        default: self = .unmanaged
        }
    }
}
