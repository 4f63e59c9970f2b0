import FoundationEssentials

// What the network says about a link's cost: systemd-networkd's DHCP lease (`ANDROID_METERED`)
// and NetworkManager's `Metered`, guesses that `[Interfaces] Metered=` and `NotMetered=` override
// (see `LinkVerdict`). A change is a delta: that link's slice alone is classified again. Flips
// go through `CostFlipMerger`: at most one `costChanged` per link a second, a log line a minute.
extension MonitorCore {
    /// What the network guesses about the link, as subscribers were last shown it.
    func isMeteredGuess(_ link: LinkFacts) -> Bool {
        costFlips.shown(link.index) ?? rawMeteredGuess(link)
    }

    /// What the network guesses now: metered by its lease or by NetworkManager.
    func rawMeteredGuess(_ link: LinkFacts) -> Bool {
        (leaseMetered[link.index] ?? false) || networkManagerMetered.contains(link.name)
    }

    /// What the DHCP lease of link `index` says about its cost; re-classifies that link when the
    /// guess changed (at once, or at the end of the link's second).
    public mutating func leaseMetered(_ metered: Bool, index: Int, now: ClockReading) -> [Action] {
        guard let link = table.links[index] else { return [] }
        let shown = isMeteredGuess(link)
        leaseMetered[index] = metered
        let detail = metered ? "DHCP lease asks for metered use (ANDROID_METERED)" : "DHCP lease no longer asks for metered use"
        // Every word of the lease goes through the merger, if only for its rate-limited log line.
        var actions: [Action] = []
        carryOut(costFlips.guessChanged(index: index, metered: rawMeteredGuess(link), shown: shown, detail: detail,
                                        now: now.uptime), now: now, into: &actions)
        return actions
    }

    /// The lease watcher starts afresh (a new directory): what the old one said is forgotten,
    /// and every link's lease is read.
    public mutating func leasesRestarted() -> [Action] {
        leaseMetered = [:]
        costFlips.forgetAll()
        return [.refreshLeases(table.links.keys.sorted())]
    }

    /// The interfaces NetworkManager calls metered (its devices' `Metered`: yes or guess-yes);
    /// re-classifies the links whose guess changed.
    public mutating func networkManagerMetered(_ names: [String], now: ClockReading) -> [Action] {
        let next = Set(names)
        let moved = networkManagerMetered.symmetricDifference(next)
        guard !moved.isEmpty else { return [] }
        let affected = table.links.values.filter { moved.contains($0.name) }.sorted { $0.index < $1.index }
        let before = affected.map { (shown: isMeteredGuess($0), raw: rawMeteredGuess($0)) }
        networkManagerMetered = next
        var actions: [Action] = []
        for (link, before) in zip(affected, before) where rawMeteredGuess(link) != before.raw {
            carryOut(costFlips.guessChanged(index: link.index, metered: rawMeteredGuess(link), shown: before.shown,
                                            detail: "NetworkManager's metered guess changed", now: now.uptime),
                     now: now, into: &actions)
        }
        return actions
    }

    /// The second armed by `.armCostFlip` ended for link `index`: the newest held guess is shown.
    public mutating func costFlipIntervalEnded(index: Int, now: ClockReading) -> [Action] {
        var actions: [Action] = []
        carryOut(costFlips.intervalEnded(index: index, now: now.uptime), now: now, into: &actions)
        return actions
    }

    /// Carries out what `CostFlipMerger` decided.
    private mutating func carryOut(_ decisions: [CostFlipMerger.Action], now: ClockReading, into actions: inout [Action]) {
        for decision in decisions {
            switch decision {
            case .show(let index, _, let detail):
                linkVerdicts[index] = nil
                let reason = Reason(code: .costChanged, interface: table.links[index]?.name, detail: detail)
                run(scheduler.linkCostChanged(index: index, reason: reason, now: now), now: now, into: &actions)
            case .arm(let index, let seconds):
                actions.append(.armCostFlip(index: index, after: seconds))
            case .log(let index, let detail, let suppressed):
                let name = table.links[index]?.name ?? "link \(index)"
                actions.append(.log(.info, "\(name): \(detail)" + (suppressed > 0 ? " (\(suppressed) flips since the last line not logged)" : "")))
            }
        }
    }
}
