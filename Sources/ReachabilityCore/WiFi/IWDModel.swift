/// iwd's stations as reachd reads them, from its ObjectManager (`/`): each device's `Device.Name`
/// and `Station` (`State`, `ConnectedNetwork`, `ConnectedAccessPoint`), the connected
/// `Network.Name` and `BasicServiceSet.Address`, and each connected station's last
/// `StationDiagnostic.GetDiagnostics` answer (`RSSI`, `Frequency`, `TxBitrate` in 100 kbit/s,
/// `ConnectedBss`). Pure: the sd-bus source feeds it.
public struct IWDModel: Equatable, Sendable {
    public static let service = "net.connman.iwd"
    public static let objectManagerPath = "/"
    public static let objectsPath = "/net/connman/iwd"
    public static let deviceInterface = "net.connman.iwd.Device"
    public static let stationInterface = "net.connman.iwd.Station"
    public static let diagnosticInterface = "net.connman.iwd.StationDiagnostic"
    public static let networkInterface = "net.connman.iwd.Network"
    public static let bssInterface = "net.connman.iwd.BasicServiceSet"

    public var mirror = DBusObjectMirror()
    /// Device path → its last diagnostics (`a{sv}`), while connected.
    public private(set) var diagnostics: [String: [String: DBusValue]] = [:]

    public init() {}

    public mutating func reset() {
        mirror.reset()
        diagnostics = [:]
    }

    /// Stores a `GetDiagnostics` answer for the device at `path`; an error (nil) forgets the last one.
    public mutating func apply(diagnostics arguments: [DBusValue]?, path: String) {
        guard let arguments, arguments.count == 1, let values = arguments[0].dictionary else {
            diagnostics[path] = nil
            return
        }
        diagnostics[path] = values
    }

    /// Drops the diagnostics of devices that are no longer connected (they described a link
    /// that is gone).
    public mutating func pruneDiagnostics() {
        let connected = Set(connectedDevices)
        diagnostics = diagnostics.filter { connected.contains($0.key) }
    }

    /// The paths of the devices whose station is connected (or roaming): whose diagnostics are worth asking.
    public var connectedDevices: [String] {
        mirror.objects.compactMap { path, interfaces in
            WiFiLinkState(iwdStationState: interfaces[Self.stationInterface]?["State"]?.string).isConnected ? path : nil
        }.sorted()
    }

    /// What iwd says of each device, by interface name.
    public var claims: [String: WiFiOwnerClaim] {
        var result: [String: WiFiOwnerClaim] = [:]
        for (path, interfaces) in mirror.objects {
            guard let device = interfaces[Self.deviceInterface], let name = device["Name"]?.string, !name.isEmpty else { continue }
            let station = interfaces[Self.stationInterface]
            // A device without a Station interface (access point or ad-hoc mode, powered off)
            // is not one iwd runs as a station.
            let state = WiFiLinkState(iwdStationState: station == nil ? nil : station?["State"]?.string ?? "disconnected")
            result[name] = WiFiOwnerClaim(owner: .iwd, state: state,
                                          station: state.isConnected ? self.station(path: path, station: station ?? [:]) : nil)
        }
        return result
    }

    private func station(path: String, station: [String: DBusValue]) -> WiFiStation {
        let ssid = station["ConnectedNetwork"]?.objectPath.flatMap { mirror[$0, Self.networkInterface]?["Name"]?.string }
        let accessPoint = station["ConnectedAccessPoint"]?.objectPath
            .flatMap { mirror[$0, Self.bssInterface]?["Address"]?.string }.flatMap(WiFiBSSID.init)
        var figures = diagnostics[path] ?? [:]
        let measured = figures["ConnectedBss"]?.string.flatMap(WiFiBSSID.init)
        // Figures read from another access point (before a roam was announced) are not this one's.
        if let accessPoint, let measured, accessPoint != measured { figures = [:] }
        return WiFiStation(owner: .iwd, ssid: ssid.map(WiFiSSID.init), bssid: accessPoint ?? measured,
                           frequencyMHz: figures["Frequency"]?.integer,
                           signalDbm: figures["RSSI"]?.integer.map(Double.init),
                           txBitrateKbps: figures["TxBitrate"]?.integer.map { $0 * 100 })
    }
}
