import FoundationEssentials

extension DataStall {
    /// `reachctl status --verbose`'s figures of a stall: `48 segments sent since one was
    /// received · 95.8 % retransmitted · dumps 10 s apart · since 2026-12-06T02:30:01.000Z
    /// (12 s ago)`, each figure as it was when the stall was suspected.
    public func figures(now: Date) -> String {
        let share = failRate.isFinite ? min(max(failRate, 0), 1) * 100 : 0
        let age = max(0, now.timeIntervalSince(since))
        return [
            "\(sentSinceReceive) segment\(sentSinceReceive == 1 ? "" : "s") sent since one was received",
            "\(LinkQuality.oneDecimal(share)) % retransmitted",
            "dumps \(LinkQuality.oneDecimal(Double(periodMs) / 1000)) s apart",
            "since \(Timestamp.string(from: since)) (\(age < 1 ? "just now" : "\(Int(age)) s ago"))",
        ].joined(separator: " · ")
    }
}

extension DataStall {
    /// `failRate` as a whole percentage, 0…100, as the summary shows it.
    public var percentRetransmitted: Int { Self.percent(failRate) }

    /// `tcp 96 48`: method, percentage retransmitted, segments sent since one was received, as
    /// a dispatcher script gets it (`REACHD_STALL`), split by a shell's `read` or `set --`.
    public var words: String {
        "\(method.rawValue) \(percentRetransmitted) \(sentSinceReceive)"
    }
}

extension DataStall.Dump {
    /// `02:30:01 · 10 s · sent 24 · received 0 · retransmitted 23`: one dump of the evidence
    /// (the time of day in UTC, as the wire's timestamps).
    public var line: String {
        let stamp = Timestamp.string(from: at)
        let time = stamp.split(separator: "T").last.map { String($0.prefix(8)) } ?? stamp
        return "\(time) · \(LinkQuality.oneDecimal(Double(periodMs) / 1000)) s · sent \(sent) · received \(received) · retransmitted \(retransmitted)"
    }
}
