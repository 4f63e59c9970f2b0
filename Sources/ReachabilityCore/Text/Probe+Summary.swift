import FoundationEssentials

extension Probe {
    /// One human line, as `reachctl probe` prints it:
    /// `internet: full · HTTP 204 · 18.2 ms · http://…`,
    /// `internet: portal · HTTP 302 · log in at http://portal/login · http://…`,
    /// `internet: limited · timed out connecting to 10.0.0.1:80 after 5 s · http://…`,
    /// `internet: portal · HTTP 200 · log in at https://… · 12 min left · https://…/capport`.
    public var summary: String {
        var parts = ["internet: \(result.rawValue)"]
        if let httpStatus { parts.append("HTTP \(httpStatus)") }
        if let rttMs { parts.append(String(fixed: rttMs, fractionDigits: 1) + " ms") }
        switch result {
        case .portal:
            if let portalUrl { parts.append("log in at \(portalUrl)") } else if let error { parts.append(error) }
        case .limited, .none, .unknown:
            if let error { parts.append(error) }
        case .full:
            break
        }
        if let left = sessionLeft(now: checkedAt) { parts.append(left) }
        parts.append(url)
        return parts.joined(separator: " · ")
    }

    /// What a captive-portal API says is left of the session, counted down from `checkedAt` to
    /// `now`: `12 min left`, `45 s left`, `2 h 5 min left`, `1.5 MB left`; nil when it said nothing.
    public func sessionLeft(now: Date) -> String? {
        var parts: [String] = []
        if let secondsRemaining {
            let elapsed = max(0, Int(now.timeIntervalSince(checkedAt)))
            let left = max(0, secondsRemaining - elapsed)
            switch left {
            case ..<120: parts.append("\(left) s left")
            case ..<7200: parts.append("\(left / 60) min left")
            default: parts.append("\(left / 3600) h \(left % 3600 / 60) min left")
            }
        }
        if let bytesRemaining {
            let units: [(Int, String)] = [(1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "KB")]
            if let (size, name) = units.first(where: { bytesRemaining >= $0.0 }) {
                parts.append(String(fixed: Double(bytesRemaining) / Double(size), fractionDigits: 1) + " \(name) left")
            } else {
                parts.append("\(bytesRemaining) bytes left")
            }
        }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }
}
