import FoundationEssentials

extension LinkQuality {
    /// `good (4g, 48 ms)`, `minimal (2g, radio)`, `good (4g, default)`, `moderate (3g, 420 ms,
    /// stale)`: the class and what it rests on (a class without an RTT names its source, so a
    /// guess never reads like a measurement), as `reachctl status` and the log print it.
    public var summary: String {
        var details: [String] = []
        if let type = effectiveType { details.append(type.rawValue) }
        if let rtt = rttMs, rtt.isFinite { details.append("\(Int(rtt.rounded())) ms") }
        if rttMs?.isFinite != true { details.append(source.rawValue) }
        if stale { details.append("stale") }
        return "\(level.rawValue) (" + details.joined(separator: ", ") + ")"
    }

    /// `reachctl status --verbose`'s figures: `rtt 48 ms (min 41 ms) · loss 0.3 % · 1200 kbit/s ·
    /// 14 samples, passive · 3 s ago`, then the radio's when there is one.
    public func figures(now: Date) -> String {
        var parts: [String] = []
        if let rtt = rttMs, rtt.isFinite {
            var text = "rtt \(Int(rtt.rounded())) ms"
            if let minimum = minRttMs, minimum.isFinite { text += " (min \(Int(minimum.rounded())) ms)" }
            parts.append(text)
        }
        if let loss = lossPercent, loss.isFinite { parts.append("loss \(Self.oneDecimal(loss)) %") }
        if let downlink = downlinkKbps, downlink.isFinite { parts.append("\(Int(downlink.rounded())) kbit/s") }
        parts.append("\(samples) sample\(samples == 1 ? "" : "s"), \(source.rawValue)")
        let age = max(0, now.timeIntervalSince(measuredAt))
        parts.append(age < 1 ? "just now" : "\(Int(age)) s ago")
        if let signal { parts.append(signal.summary) }
        return parts.joined(separator: " · ")
    }

    /// `0.3`, `12`, `-95`, `-10.5`: one decimal, none when it is 0.
    static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((abs(value) * 10).rounded())
        let text = tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
        return value < 0 && tenths != 0 ? "-" + text : text
    }
}

extension RadioSignal {
    /// `signal lte 2/4 (rsrp -95 dBm, rsrq -10 dB, snr 12 dB)`.
    public var summary: String {
        let figures = [("rssi", rssi, "dBm"), ("rsrp", rsrp, "dBm"), ("rsrq", rsrq, "dB"), ("snr", snr, "dB")]
            .compactMap { name, value, unit in value.flatMap { $0.isFinite ? "\(name) \(LinkQuality.oneDecimal($0)) \(unit)" : nil } }
        return "signal \(technology) \(level)/4" + (figures.isEmpty ? "" : " (" + figures.joined(separator: ", ") + ")")
    }
}
