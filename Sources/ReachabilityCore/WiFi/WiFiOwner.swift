/// Who reports a Wi-Fi device's connection: the daemon that manages it, or the kernel's nl80211
/// station information when no daemon does.
public enum WiFiOwner: String, CaseIterable, Equatable, Hashable, Sendable {
    /// iwd (`net.connman.iwd`).
    case iwd
    /// NetworkManager (`org.freedesktop.NetworkManager`), whichever backend it drives.
    case networkManager
    /// wpa_supplicant (`fi.w1.wpa_supplicant1`) without NetworkManager above it.
    case wpaSupplicant
    /// The kernel (nl80211 station and interface replies): no daemon claims the device.
    case nl80211
}
