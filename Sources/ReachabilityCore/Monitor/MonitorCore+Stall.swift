import FoundationEssentials

// Data stalls: the passive dumps' segment counts go to `DataStallDetector`; a suspicion is
// shown on the uplink (`Interface.stall`) and checks it, and only that check's verdict moves
// connectivity, in an event with reason `dataStall`.
extension MonitorCore {
    /// The segment counts of one passive dump (`QualityDump.stalls`). Dropped while asleep.
    mutating func stallsMeasured(_ dump: QualityDump, now: ClockReading, into actions: inout [Action]) {
        guard configuration.dataStall.enabled, !scheduler.asleep else { return }
        let decisions = stallDetector.dumped(dump.stalls, uplinks: stallUplinks(), interval: dump.interval, now: now)
        carryOut(decisions, now: now, into: &actions)
    }

    /// The uplinks whose traffic is judged: the path's links and the standby uplinks.
    func stallUplinks() -> [DataStallDetector.Uplink] {
        let status = tracker.status
        guard status.reachable else { return [] }
        var uplinks: [DataStallDetector.Uplink] = []
        for interface in [status.primary, status.vpn].compactMap({ $0 }) {
            uplinks.append(DataStallDetector.Uplink(index: interface.index, expensive: status.expensive))
        }
        for standby in StandbyUplink.all(in: tracker.indexed.slices, status: status)
        where !uplinks.contains(where: { $0.index == standby.path.index }) {
            uplinks.append(DataStallDetector.Uplink(index: standby.path.index, expensive: standby.expensive))
        }
        return uplinks
    }

    /// The last few dumps' evidence for uplink `index`, oldest first (`reachctl status --verbose`).
    public func stallEvidence(_ index: Int) -> [DataStallDetector.Evidence] {
        stallDetector.evidence(index)
    }

    /// A verdict of a check of `index` arrived (`uplinks`: the links it speaks for, the path's
    /// transport and tunnel): the detector hears it, and the reason its event carries when the
    /// check was made because of a stall. The stalls it clears go out with the verdict's event.
    mutating func stallReason(forVerdict probe: Probe?, index: Int?, uplinks: [Int], began: TimeInterval?,
                              now: ClockReading, into actions: inout [Action]) -> Reason? {
        guard let index, let probe else { return nil }
        let rechecked = stallRechecks.remove(index) != nil
        let stalled = uplinks.contains { stallDetector.stalls[$0] != nil }
        for uplink in uplinks {
            carryOut(stallDetector.checked(index: uplink, connectivity: probe.result, began: began ?? now.uptime), now: now, into: &actions, classify: false)
        }
        guard rechecked || stalled else { return nil }
        let name = tracker.status.interfaces.first { $0.index == (uplinks.first { stallDetector.stalls[$0] != nil } ?? index) }?.name
        let detail: String
        switch probe.result {
        case .full: detail = stalled ? "the check answered; the uplink carries traffic" : "traffic answered again; the check answered"
        case .unknown, .none, .portal, .limited: detail = "checked after a data stall: \(probe.result.rawValue)"
        }
        return Reason(code: .dataStall, interface: name, detail: detail)
    }

    /// Carries out what the detector decided. `classify`: the stalls changed go out now (else
    /// with the classification the caller makes next).
    mutating func carryOut(_ decisions: [DataStallDetector.Decision], now: ClockReading, into actions: inout [Action],
                           classify: Bool = true) {
        guard !decisions.isEmpty else { return }
        var detail: (index: Int, text: String)?
        for decision in decisions {
            switch decision {
            case .suspected(let index, let stall):
                detail = detail ?? (index, "traffic unanswered: \(stall.sentSinceReceive) segments sent since the last received, "
                                    + "\(DataStall.percent(stall.failRate)) % retransmitted")
            case .cleared(let index):
                detail = detail ?? (index, "traffic answered")
            case .recheck(let index):
                let status = tracker.status
                let onPath = status.primary?.index == index || status.vpn?.index == index
                // A verdict names the path by its tunnel when there is one (`ProbePath`). With
                // the check off none comes: nothing waits for one to carry the reason.
                if configuration.connectivityCheck { stallRechecks.insert(onPath ? (ProbePath(status)?.index ?? index) : index) }
                actions.append(.recheck(index: index, path: onPath))
            }
        }
        let stalls = stallDetector.stalls
        guard stalls != scheduler.reported.dataStalls, let detail else { return }
        let name = tracker.status.interfaces.first { $0.index == detail.index }?.name
        let reason = Reason(code: .dataStall, interface: name, detail: detail.text)
        if classify {
            run(scheduler.stallsChanged(stalls, reason: reason, now: now), now: now, into: &actions)
        } else {
            scheduler.takeStalls(stalls)
        }
    }
}

extension DataStallDetector.Configuration {
    /// The detector's part of `[DataStall]`.
    public init(_ section: ReachdConfiguration.DataStallSection) {
        self.init()
        enabled = section.enabled
        minimumSegments = section.minimumSegments
        failRate = section.failRatePercent / 100
        expensiveRecheckInterval = section.expensiveRecheckIntervalSeconds
    }
}
