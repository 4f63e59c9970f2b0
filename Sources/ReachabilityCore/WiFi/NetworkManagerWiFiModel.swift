/// NetworkManager's Wi-Fi devices as reachd reads them: each device's `Device` (`Interface`,
/// `State`) and `Device.Wireless` (`ActiveAccessPoint`, `Bitrate`, kbit/s) interfaces, and the
/// active access point's `AccessPoint` (`Ssid`, `HwAddress`, `Frequency`, `Strength`), all from
/// its ObjectManager (`/org/freedesktop`). Pure: the sd-bus source feeds `mirror`.
///
/// NetworkManager publishes no dBm, only its own percentage: its devices have no bars unless
/// nl80211 fills the signal in for the same access point (`WiFiStation.filling(from:)`).
public struct NetworkManagerWiFiModel: Equatable, Sendable {
    public static let wirelessInterface = "org.freedesktop.NetworkManager.Device.Wireless"
    public static let accessPointInterface = "org.freedesktop.NetworkManager.AccessPoint"
    /// Where devices and access points live (their `PropertiesChanged`).
    public static let objectsPath = "/org/freedesktop/NetworkManager"

    public var mirror = DBusObjectMirror()

    public init() {}

    /// What NetworkManager says of each Wi-Fi device, by interface name.
    public var claims: [String: WiFiOwnerClaim] {
        var result: [String: WiFiOwnerClaim] = [:]
        for (_, interfaces) in mirror.objects {
            guard let device = interfaces[NetworkManagerDBus.deviceInterface], let wireless = interfaces[Self.wirelessInterface],
                  let name = device["Interface"]?.string, !name.isEmpty else { continue }
            let state = WiFiLinkState(networkManagerDeviceState: device["State"]?.uint32 ?? 0)
            var station: WiFiStation?
            if let path = wireless["ActiveAccessPoint"]?.objectPath, path != "/",
               let point = mirror[path, Self.accessPointInterface] {
                station = WiFiStation(owner: .networkManager,
                                      ssid: point["Ssid"]?.bytes.map { WiFiSSID(bytes: $0) },
                                      bssid: point["HwAddress"]?.string.flatMap(WiFiBSSID.init),
                                      frequencyMHz: point["Frequency"]?.integer,
                                      strengthPercent: point["Strength"]?.integer,
                                      txBitrateKbps: wireless["Bitrate"]?.integer)
            }
            result[name] = WiFiOwnerClaim(owner: .networkManager, state: state, station: station)
        }
        return result
    }
}
