import FoundationEssentials

// What the network says about a link's cost: systemd-networkd's DHCP lease (`ANDROID_METERED`)
// and NetworkManager's `Metered`, guesses that `[Interfaces] Metered=` and `NotMetered=` override
// (see `LinkVerdict`). A change is a delta: that link's slice alone is classified again.
extension MonitorCore {
    /// What the network guesses about the link: metered by its lease or by NetworkManager.
    func isMeteredGuess(_ link: LinkFacts) -> Bool {
        (leaseMetered[link.index] ?? false) || networkManagerMetered.contains(link.name)
    }

    /// What the DHCP lease of link `index` says about its cost (logged); re-classifies that
    /// link when the guess changed.
    public mutating func leaseMetered(_ metered: Bool, index: Int, now: ClockReading) -> [Action] {
        guard let link = table.links[index] else { return [] }
        let before = isMeteredGuess(link)
        leaseMetered[index] = metered
        let detail = metered ? "DHCP lease asks for metered use (ANDROID_METERED)" : "DHCP lease no longer asks for metered use"
        var actions: [Action] = [.log(.info, "\(link.name): \(detail)")]
        guard isMeteredGuess(link) != before else { return actions }
        costChanged(of: [index], detail: detail, now: now, into: &actions)
        return actions
    }

    /// The lease watcher starts afresh (a new directory): what the old one said is forgotten,
    /// and every link's lease is read.
    public mutating func leasesRestarted() -> [Action] {
        leaseMetered = [:]
        return [.refreshLeases(table.links.keys.sorted())]
    }

    /// The interfaces NetworkManager calls metered (its devices' `Metered`: yes or guess-yes);
    /// re-classifies the links whose guess changed.
    public mutating func networkManagerMetered(_ names: [String], now: ClockReading) -> [Action] {
        let next = Set(names)
        let moved = networkManagerMetered.symmetricDifference(next)
        guard !moved.isEmpty else { return [] }
        let before = Dictionary(uniqueKeysWithValues: table.links.map { ($0.key, isMeteredGuess($0.value)) })
        networkManagerMetered = next
        let changed = table.links.filter { moved.contains($0.value.name) && before[$0.key] != isMeteredGuess($0.value) }.map(\.key)
        var actions: [Action] = []
        costChanged(of: changed, detail: "NetworkManager's metered guess changed", now: now, into: &actions)
        return actions
    }

    private mutating func costChanged(of indexes: [Int], detail: String, now: ClockReading, into actions: inout [Action]) {
        for index in indexes.sorted() {
            linkVerdicts[index] = nil
            let reason = Reason(code: .costChanged, interface: table.links[index]?.name, detail: detail)
            run(scheduler.linkCostChanged(index: index, reason: reason, now: now), now: now, into: &actions)
        }
    }
}
