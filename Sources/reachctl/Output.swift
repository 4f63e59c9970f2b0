import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem

/// Exit statuses of reachctl (listed in reachctl(1) and the README).
enum ExitCode {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
    /// EX_NOPERM: reachd refused (`simulate` by a user who may not).
    static let permissionDenied: Int32 = 77
    /// EX_UNAVAILABLE: reachd does not answer.
    static let unavailable: Int32 = 69
}

func printLine(_ text: String) { emit(text + "\n") }

func fail(_ message: String, code: Int32 = ExitCode.failure) -> Never {
    // Messages carry the daemon's and the network's words (error texts, host names).
    emit("reachctl: \(TerminalText.escaped(message))\n", to: .error)
    ProcessSetup.exit(code)
}

/// Colour only on a terminal, and never with NO_COLOR (no-color.org).
struct Style {
    let enabled: Bool

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.init(enabled: StandardStream.output.isTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb")
    }

    init(enabled: Bool) { self.enabled = enabled }

    func paint(_ text: String, _ code: String) -> String { enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }

    /// `text` from outside made safe for the terminal (`TerminalText.escaped`): every human line
    /// goes through it before any colour of ours is added.
    func safe(_ text: String) -> String { TerminalText.escaped(text) }

    /// The summary line with `online` green and `offline` red, and an internet that does not
    /// answer as it should (`portal`, `limited`) yellow, as `reachctl probe` shows them; times
    /// (a stall's length, a portal session's rest) counted to `now`.
    func summary(_ status: Status, now: Date = Date()) -> String {
        var line = safe(status.summary(now: now))
        guard enabled else { return line }
        switch status.connectivity {
        case .portal, .limited:
            let verdict = " · internet: \(status.connectivity.rawValue)"
            if let range = line.firstRange(of: verdict) {
                line.replaceSubrange(range, with: " · internet: " + paint(status.connectivity.rawValue, "33"))
            }
        case .full, .unknown, .none:
            break
        }
        if line.hasPrefix("online") { return paint("online", "32") + line.dropFirst("online".count) }
        if line.hasPrefix("offline") { return paint("offline", "31") + line.dropFirst("offline".count) }
        return line
    }
}

/// Encodes a wire object as one compact JSON line. JSON escapes C0 controls itself; DEL, C1
/// controls and bidirectional overrides are written as `\u` escapes too, so that no string from
/// outside reaches a terminal raw (the JSON means the same).
func jsonLine<T: Encodable>(_ value: T) -> String {
    let text: String
    do { text = try WireJSON.string(value) } catch { fail("cannot encode JSON: \(error)") }
    guard text.unicodeScalars.contains(where: TerminalText.needsEscape) else { return text }
    var escaped = ""
    for scalar in text.unicodeScalars {
        if TerminalText.needsEscape(scalar) {
            let hex = String(scalar.value, radix: 16)
            escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        } else {
            escaped.unicodeScalars.append(scalar)
        }
    }
    return escaped
}
