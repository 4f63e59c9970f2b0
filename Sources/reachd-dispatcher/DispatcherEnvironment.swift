import ReachabilityCore

/// The environment a dispatcher script runs with: `PATH`, `LANG` and the event in `REACHD_*`
/// variables, nothing inherited. Every value passes through `value(_:)`, so text from the
/// network (an interface's name, a portal's URL) never reaches a script as raw control bytes,
/// nor longer than `maximumValueLength`.
public enum DispatcherEnvironment {
    public static let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    /// The longest value a script gets, in bytes of its escaped UTF-8: room for any portal URL
    /// a browser takes, far below the kernel's 128 KiB for one environment string.
    public static let maximumValueLength = 4096

    /// The variables for a batch, sorted by name, as `NAME=value` strings for `execve(2)`.
    public static func variables(for batch: DispatchBatch, script: String) -> [String] {
        let event = batch.event
        let current = event.current, previous = event.previous
        func bool(_ value: Bool) -> String { value ? "yes" : "no" }
        let values: [(String, String)] = [
            ("LANG", "C.UTF-8"),
            ("PATH", path),
            ("REACHD_CHANGES", event.changes.joined(separator: " ")),
            ("REACHD_COALESCED", String(batch.count)),
            ("REACHD_CONNECTIVITY", current.connectivity.rawValue),
            ("REACHD_EFFECTIVE_TYPE", current.linkQuality?.effectiveType?.rawValue ?? ""),
            ("REACHD_EVENT", event.event.rawValue),
            ("REACHD_EXPENSIVE", bool(current.expensive)),
            ("REACHD_GENERATION", current.cellular?.generation ?? ""),
            ("REACHD_INTERFACE", current.primary?.name ?? ""),
            ("REACHD_INTERFACE_KIND", current.primary?.kind.rawValue ?? ""),
            ("REACHD_LINK_QUALITY", current.linkQuality?.level.rawValue ?? ""),
            ("REACHD_PORTAL_URL", current.probe?.portalUrl ?? ""),
            ("REACHD_PREVIOUS_CONNECTIVITY", previous?.connectivity.rawValue ?? ""),
            ("REACHD_PREVIOUS_INTERFACE", previous?.primary?.name ?? ""),
            ("REACHD_PREVIOUS_REACHABLE", previous.map { bool($0.reachable) } ?? ""),
            ("REACHD_PREVIOUS_STATUS", previous?.status.rawValue ?? ""),
            ("REACHD_REACHABLE", bool(current.reachable)),
            ("REACHD_REASON", event.reason.code.rawValue),
            ("REACHD_REASON_INTERFACE", event.reason.interface ?? ""),
            ("REACHD_SCRIPT", script),
            ("REACHD_SEQUENCE", String(event.sequence)),
            ("REACHD_SIMULATED", bool(current.simulated)),
            ("REACHD_STALL", current.pathStall?.words ?? ""),
            ("REACHD_STATUS", current.status.rawValue),
            ("REACHD_VPN", current.vpn?.name ?? ""),
            // The primary's Wi-Fi connection as its owner reports it (empty when not Wi-Fi).
            ("REACHD_WIFI_BAND", current.primary?.wifi?.band?.rawValue ?? ""),
            ("REACHD_WIFI_BARS", current.primary?.wifi?.bars.map(String.init) ?? ""),
            ("REACHD_WIFI_BSSID", current.primary?.wifi?.bssid ?? ""),
            ("REACHD_WIFI_SIGNAL_DBM", current.primary?.wifi?.signalDbm.map(String.init) ?? ""),
            ("REACHD_WIFI_SSID", current.primary?.wifi?.ssid ?? ""),
        ]
        return values.map { "\($0.0)=\(value($0.1))" }
    }

    /// `text` escaped (`escaped(_:)`) and cut after at most `maximumValueLength` bytes, never
    /// inside an escape or a UTF-8 sequence.
    public static func value(_ text: String) -> String {
        let whole = escaped(text)
        guard whole.utf8.count > maximumValueLength else { return whole }
        var result = "", length = 0
        for scalar in text.unicodeScalars {
            let piece = escaped(String(scalar))
            length += piece.utf8.count
            if length > maximumValueLength { break }
            result += piece
        }
        return result
    }

    /// `text` with every control character (C0 including tab and newline, DEL, C1), every
    /// bidirectional override and the backslash written as an escape: `\x1b`, `\u{202e}`, `\\`.
    /// Unambiguous: a script can undo it (`printf '%b'` reads the `\xNN` forms).
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 == "\\" || TerminalText.needsEscape($0) }) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar == "\\" {
                result += "\\\\"
            } else if TerminalText.needsEscape(scalar) {
                let hex = String(scalar.value, radix: 16)
                result += scalar.value < 0x80 ? "\\x" + (hex.count < 2 ? "0" + hex : hex) : "\\u{" + hex + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
