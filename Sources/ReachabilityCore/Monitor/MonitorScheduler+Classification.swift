import FoundationEssentials

/// What the configuration and sysfs say about one link, decided once per name: its kind, and
/// whether it is metered, constrained or ignored.
public struct LinkVerdict: Equatable, Sendable {
    public var name: String
    public var kind: InterfaceKind
    public var metered: Bool
    public var ignored: Bool
    /// In low data mode (`[Interfaces] Constrained=`).
    public var constrained: Bool

    public init(name: String, kind: InterfaceKind, metered: Bool, ignored: Bool, constrained: Bool = false) {
        self.name = name; self.kind = kind; self.metered = metered; self.ignored = ignored; self.constrained = constrained
    }
}

extension MonitorScheduler.Reported {
    /// The whole picture: the kernel's `table`, as `verdict` names its links, with these modems
    /// and verdicts; `connectivityCheck`: whether the internet is checked at all.
    public func snapshot(of table: KernelStateTable, connectivityCheck: Bool = true,
                         verdict: (LinkFacts) -> LinkVerdict) -> NetworkSnapshot {
        var kinds: [Int: InterfaceKind] = [:], metered: Set<Int> = [], ignored: Set<Int> = [], constrained: Set<Int> = []
        for (index, facts) in table.links {
            let decided = verdict(facts)
            kinds[index] = decided.kind
            if decided.metered { metered.insert(index) }
            if decided.ignored { ignored.insert(index) }
            if decided.constrained { constrained.insert(index) }
        }
        var snapshot = table.snapshot(kinds: kinds, metered: metered, ignored: ignored, modems: modems, probe: probe,
                                      constrained: constrained)
        snapshot.probePath = probePath
        snapshot.standbyVerdicts = standbyVerdicts
        snapshot.connectivityCheck = connectivityCheck
        snapshot.linkQualities = linkQualities
        snapshot.measuresQuality = measuresQuality
        snapshot.dataStalls = dataStalls
        snapshot.wifi = wifi
        return snapshot
    }
}

extension StatusTracker {
    /// Classifies as `evaluation` (an action of `MonitorScheduler`) says, with what the
    /// scheduler holds (`reported`): the whole picture again, or only the slices of the indexes
    /// it names (the tracker lends the addresses and routes of those whose link alone changed),
    /// with the modems, rules, verdict and standby verdicts when they changed. What
    /// `MonitorCore` does with `.evaluate`.
    public mutating func update(_ evaluation: MonitorScheduler.Evaluation, table: KernelStateTable,
                                reported: MonitorScheduler.Reported, connectivityCheck: Bool = true,
                                verdict: (LinkFacts) -> LinkVerdict, now: Date) -> Action {
        if evaluation.whole {
            return update(reported.snapshot(of: table, connectivityCheck: connectivityCheck, verdict: verdict),
                          reason: evaluation.reason, now: now)
        }
        // The newest figures ride along with every classification (they make no event alone).
        takeLinkQualities(reported.linkQualities, measuring: reported.measuresQuality)
        takeDataStalls(reported.dataStalls)
        var slices: [LinkSlice] = []
        slices.reserveCapacity(evaluation.touched.count)
        for index in evaluation.touched {
            guard let facts = table.links[index] else {
                slices.append(table.slice(at: index, kind: .other, metered: false, ignored: false))
                continue
            }
            let decided = verdict(facts)
            let previous = evaluation.contents.contains(index) ? nil : indexed.slices[index]
            slices.append(table.slice(at: index, kind: decided.kind, metered: decided.metered, ignored: decided.ignored,
                                      previous: previous, constrained: decided.constrained))
        }
        return update(slices: slices, modems: evaluation.modems ? reported.modems : nil,
                      wifi: evaluation.wifi ? reported.wifi : nil,
                      verdict: evaluation.verdict ? (reported.probe, reported.probePath) : nil,
                      rules: evaluation.rules ? table.rules : nil,
                      standbyVerdicts: evaluation.standby ? reported.standbyVerdicts : nil, reason: evaluation.reason, now: now)
    }
}

extension MonitorScheduler.KernelChanges {
    /// Applies one decoded message to `table` and notes what it changed, as the monitor does
    /// with every message it reads. What routers announce (their options, received at
    /// `receivedAt`, and the routes they add or withdraw) counts as `announced`, for the merge;
    /// an option that only refreshes a lifetime changes nothing. A rejected option changes
    /// nothing (the monitor logs it).
    public mutating func apply(_ change: KernelChange, to table: inout KernelStateTable, receivedAt: TimeInterval) {
        switch change {
        case .routerOption(var option):
            option.receivedAt = receivedAt
            var announced: Set<Int> = []
            table.apply(.routerOption(option), touching: &announced, contents: &contents)
            touched.formUnion(announced)
            self.announced.formUnion(announced)
            return
        case .routeAdded(let route, _) where route.fromRouterAdvertisement,
             .routeRemoved(let route) where route.fromRouterAdvertisement:
            // A router on the link added or withdrew it (a new link-local source is a new
            // router, and a new route): merged like the advertisements' options.
            var announced: Set<Int> = []
            table.apply(change, touching: &announced, contents: &contents)
            touched.formUnion(announced)
            self.announced.formUnion(announced)
            return
        case .routerOptionRejected:
            return
        case .ruleAdded, .ruleRemoved:
            rules = true
        case .link, .linkRemoved, .addressAdded, .addressRemoved, .routeAdded, .routeRemoved:
            break
        }
        table.apply(change, touching: &touched, contents: &contents)
        other = true
    }
}
