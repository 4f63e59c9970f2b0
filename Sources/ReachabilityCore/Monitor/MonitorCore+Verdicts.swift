import FoundationEssentials

// What others tell the monitor (the checker's verdicts, ModemManager's modems), and what the
// configuration and sysfs say about each link.
extension MonitorCore {
    /// The checker's verdict about `path` (nil: not checked; nil path: not reachable), from a
    /// check that began at `began` (uptime; nil: now). One from before the last wake, or while
    /// asleep, is dropped.
    public mutating func verdict(_ probe: Probe?, path: ProbePath?, began: TimeInterval?, now: ClockReading) -> [Action] {
        var actions: [Action] = []
        var reason: Reason?
        if probe == nil || scheduler.counts(began: began ?? now.uptime) {
            let status = tracker.status
            let uplinks = path == nil ? [] : [status.primary?.index, status.vpn?.index].compactMap { $0 }
            reason = stallReason(forVerdict: probe, index: path?.index, uplinks: uplinks, began: began, now: now, into: &actions)
        }
        run(scheduler.verdict(probe, path: path, began: began, reason: reason, now: now), now: now, into: &actions)
        return actions
    }

    /// A standby uplink's verdict (nil: no longer checked): that interface's connectivity.
    public mutating func standbyVerdict(_ probe: Probe?, index: Int, began: TimeInterval?, now: ClockReading) -> [Action] {
        let name = tracker.status.interfaces.first { $0.index == index }?.name
        var actions: [Action] = []
        var reason: Reason?
        if probe == nil || scheduler.counts(began: began ?? now.uptime) {
            reason = stallReason(forVerdict: probe, index: index, uplinks: [index], began: began, now: now, into: &actions)
        }
        run(scheduler.standbyVerdict(probe, index: index, interface: name, began: began, reason: reason, now: now),
            now: now, into: &actions)
        return actions
    }

    /// ModemManager's modems (reason `modemChanged`, derived).
    public mutating func modemsChanged(_ modems: [ModemState], now: ClockReading) -> [Action] {
        var actions: [Action] = []
        run(scheduler.modemsChanged(modems, now: now), now: now, into: &actions)
        return actions
    }

    /// The Wi-Fi devices their owners report (reasons `roamed`, `wifiSignalChanged`,
    /// `wifiChanged`; figures alone are a quiet status).
    public mutating func wifiChanged(_ devices: [WiFiDevice], now: ClockReading) -> [Action] {
        var actions: [Action] = []
        run(scheduler.wifiChanged(devices, now: now), now: now, into: &actions)
        return actions
    }

    // MARK: Link verdicts

    /// Decides the verdicts of the links at `indexes` that have none for their current name.
    mutating func decideVerdicts<Indexes: Sequence<Int>>(for indexes: Indexes) {
        for index in indexes {
            guard let link = table.links[index] else { continue }
            if let known = linkVerdicts[index], known.name == link.name { continue }
            linkVerdicts[index] = decide(link)
        }
    }

    /// The verdicts as the tracker asks for them (decided beforehand by `decideVerdicts`). The
    /// closure holds copies of what deciding needs, never the core (whose tracker the caller
    /// mutates meanwhile: holding it would copy the tracker's storage).
    func verdictLookup() -> (LinkFacts) -> LinkVerdict {
        let verdicts = linkVerdicts, rules = decider
        return { link in
            if let known = verdicts[link.index], known.name == link.name { return known }
            return rules.decide(link)
        }
    }

    /// The kind and the configuration's verdicts of `link`.
    func decide(_ link: LinkFacts) -> LinkVerdict { decider.decide(link) }

    private var decider: Decider {
        Decider(kindFacts: kindFacts, interfaces: configuration.interfaces, ignore: configuration.monitor.ignoreInterfaces,
                leaseMetered: leaseMetered, networkManagerMetered: networkManagerMetered, shownGuesses: costFlips.shownGuesses)
    }

    /// What deciding a link's verdict takes.
    struct Decider {
        let kindFacts: [Int: InterfaceKindFacts]
        let interfaces: ReachdConfiguration.InterfacesSection
        let ignore: [String]
        let leaseMetered: [Int: Bool]
        let networkManagerMetered: Set<String>
        /// The guesses subscribers were last shown, of links whose guess flipped (`CostFlipMerger`).
        let shownGuesses: [Int: Bool]

        func decide(_ link: LinkFacts) -> LinkVerdict {
            let facts = kindFacts[link.index].flatMap { $0.name == link.name ? $0 : nil }
                ?? InterfaceKindFacts(name: link.name, rtnlKind: link.rtnlKind, arpType: link.arpType, isLoopback: link.loopback)
            let guessed = shownGuesses[link.index] ?? ((leaseMetered[link.index] ?? false) || networkManagerMetered.contains(link.name))
            return LinkVerdict(name: link.name,
                               kind: InterfaceKindRules.kind(for: facts, overrides: interfaces.kinds),
                               metered: interfaces.isMetered(link.name, guessed: guessed),
                               ignored: Glob.matchesAny(ignore, link.name),
                               constrained: interfaces.isConstrained(link.name))
        }
    }
}
