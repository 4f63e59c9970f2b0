/// Which owner speaks for a Wi-Fi device when more than one claims it: NetworkManager driving
/// iwd or wpa_supplicant as its backend, a leftover wpa_supplicant next to iwd, and the kernel's
/// nl80211 station information underneath them all.
///
/// The precedence, in order:
/// 1. A daemon that manages the device beats one that does not; nl80211 never manages (it only
///    reports), so it speaks only when no daemon manages the device.
/// 2. Among managing daemons, one that reports the device connected (or roaming) beats one that
///    does not: the other's view lags or is about another device state.
/// 3. Then NetworkManager, iwd, wpa_supplicant, in that order. NetworkManager first because when
///    it manages a device it drives iwd or wpa_supplicant for it, and its figures are the ones
///    GNOME shows; so with iwd and NetworkManager both present, NetworkManager wins when it
///    manages the device and iwd when it does not (NetworkManager with the device unmanaged,
///    iwd running it on its own). iwd before wpa_supplicant because the two cannot both drive
///    one device, and a wpa_supplicant that still lists it is the leftover.
public enum WiFiOwnerArbiter {
    /// The claim that speaks for the device; nil when there is none, or when no daemon manages
    /// the device and nl80211 did not report.
    public static func winner(_ claims: [WiFiOwnerClaim]) -> WiFiOwnerClaim? {
        var best: WiFiOwnerClaim?
        for claim in claims where claim.owner != .nl80211 && claim.state.manages {
            guard let current = best else { best = claim; continue }
            if key(claim) > key(current) { best = claim }
        }
        return best ?? claims.first { $0.owner == .nl80211 }
    }

    /// True when a daemon manages the device as Wi-Fi: it is Wi-Fi whatever sysfs says.
    public static func isManagedAsWiFi(_ claims: [WiFiOwnerClaim]) -> Bool {
        claims.contains { $0.owner != .nl80211 && $0.state.manages }
    }

    /// The owner's place in rule 3; larger wins.
    static func rank(_ owner: WiFiOwner) -> Int {
        switch owner {
        case .networkManager: 3
        case .iwd: 2
        case .wpaSupplicant: 1
        case .nl80211: 0
        }
    }

    private static func key(_ claim: WiFiOwnerClaim) -> Int {
        (claim.state.isConnected ? 10 : 0) + rank(claim.owner)
    }
}
