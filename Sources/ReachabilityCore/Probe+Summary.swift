import FoundationEssentials

extension Probe {
    /// One human line, as `reachctl probe` prints it:
    /// `internet: full · HTTP 204 · 18.2 ms · http://…`,
    /// `internet: portal · HTTP 302 · log in at http://portal/login · http://…`,
    /// `internet: limited · timed out connecting to 10.0.0.1:80 after 5 s · http://…`.
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
        parts.append(url)
        return parts.joined(separator: " · ")
    }
}
