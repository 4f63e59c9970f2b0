import FoundationEssentials

/// Decides `connectivity` and `probe` in the same evaluation as the path, so that the event that
/// changes reachability already carries the connectivity that follows from it. The one place
/// these rules live; every `Status` the monitor publishes passes through it, so none is
/// reachable with connectivity `none` or carries a probe whose verdict contradicts it.
///
/// - Not reachable: `none`, with a probe `{result: none, error: "not reachable: …"}` (null when
///   no check URL is known: checks disabled, or none published yet).
/// - Reachable, and the checker's latest verdict is about this very path (or one that differs in
///   its routers or captive-portal API URI alone): that verdict.
/// - Reachable after not being reachable (or at start), no verdict for this path yet:
///   `unknown`, probe null — "not checked yet", never a false "no internet".
/// - Moving between two reachable paths, no verdict for the new one yet: the old verdict stays
///   until the new check answers.
public enum ConnectivityRule {
    /// The checker's latest publication: a verdict (nil: not checked, or checks disabled) and the
    /// path it is about (nil: the checker saw no path, i.e. not reachable).
    public struct Verdict: Equatable, Sendable {
        public var probe: Probe?
        public var path: ProbePath?

        public init(probe: Probe?, path: ProbePath?) {
            self.probe = probe; self.path = path
        }
    }

    /// `status` with `connectivity` and `probe` decided.
    /// - Parameters:
    ///   - status: the freshly classified status (its path fields are what counts here).
    ///   - previous: the status before this evaluation; nil at start.
    ///   - verdict: the checker's latest publication; nil when it published nothing yet.
    ///   - now: the time a not-reachable probe made here is stamped with.
    public static func apply(to status: consuming Status, previous: Status?, verdict: Verdict?, now: Date) -> Status {
        // Taken, not copied: the classifier's fresh status is written in place, its fields
        // not copied into a box of their own. Only the verdict's fields are written here.
        var result = status
        let (connectivity, probe) = decide(path: ProbePath(result), previous: previous, verdict: verdict, now: now)
        let reachable = result.reachable, ipv4 = result.ipv4, ipv6 = result.ipv6
        result.connectivity = connectivity
        result.probe = probe
        (result.ipv4Connectivity, result.ipv6Connectivity) = families(
            connectivity, ipv4: family(hasPath: reachable && ipv4, checked: probe?.ipv4Result),
            ipv6: family(hasPath: reachable && ipv6, checked: probe?.ipv6Result))
        if reachable, ipv6, !ipv4, probe?.nat64 == true, !result.flags.contains(.nat64) {
            // IPv6 alone, and the check reached the IPv4 internet through DNS64 and NAT64.
            var flags = Set(result.flags)
            flags.insert(.nat64)
            result.flags = ReachabilityFlag.allCases.filter { flags.contains($0) }
        }
        return result
    }

    /// One family's verdict: `none` without a path; the family's own check when it had one;
    /// otherwise (not checked yet, or a check of an address literal, which speaks for its own
    /// family only) `unknown`. A family with a path is never `none`, as a reachable status is not.
    static func family(hasPath: Bool, checked: Connectivity?) -> Connectivity {
        guard hasPath else { return .none }
        guard let checked, checked != .none else { return .unknown }
        return checked
    }

    /// The families' verdicts made to agree with `connectivity`, so that every status keeps the
    /// family rule (`connectivity` is the better of the two), whatever verdict it carries.
    ///
    /// A verdict that no family backs is one that does not tell the families apart: a standby
    /// uplink's check shown at a failover (one request, which may have used either family), or
    /// the verdict of a path left behind that had a family the new one lacks, kept until the
    /// new path's check answers. It speaks for the families with a path that have no verdict of
    /// their own (`unknown`); failing those, for the family with a path whose own verdict is the
    /// better. A family's own verdict above the status's (which no check produces) is capped.
    static func families(_ connectivity: Connectivity, ipv4: Connectivity, ipv6: Connectivity)
        -> (ipv4: Connectivity, ipv6: Connectivity) {
        var (ipv4, ipv6) = (ipv4, ipv6)
        guard connectivity != .none else { return (.none, .none) }
        if ipv4.rank > connectivity.rank { ipv4 = connectivity }
        if ipv6.rank > connectivity.rank { ipv6 = connectivity }
        guard Connectivity.best(ipv4, ipv6) != connectivity else { return (ipv4, ipv6) }
        if ipv4 == .unknown { ipv4 = connectivity }
        if ipv6 == .unknown { ipv6 = connectivity }
        guard Connectivity.best(ipv4, ipv6) != connectivity else { return (ipv4, ipv6) }
        // Both families with a path have lesser verdicts of their own, or neither has a path.
        if ipv4 == .none && ipv6 == .none { return (ipv4, ipv6) }
        if ipv6.rank > ipv4.rank { ipv6 = connectivity } else { ipv4 = connectivity }
        return (ipv4, ipv6)
    }

    /// The connectivity and probe for a status whose path is `path` (nil: not reachable).
    public static func decide(path: ProbePath?, previous: Status?, verdict: Verdict?, now: Date)
        -> (connectivity: Connectivity, probe: Probe?) {
        guard let path else {
            // The checker's own "not reachable" verdict, once it has seen the path go.
            if let verdict, verdict.path == nil, let probe = verdict.probe, probe.result == .none {
                return (.none, probe)
            }
            if let previous, !previous.reachable, let probe = previous.probe, probe.result == .none {
                return (.none, probe)
            }
            guard let url = verdict?.probe?.url ?? previous?.probe?.url else { return (.none, nil) }
            return (.none, ProbeVerdict.notReachable(url: url, at: now))
        }
        if let verdict, path.isSameNetwork(as: verdict.path) {
            // Routers that come and go (or a new captive-portal API URI) leave the check's
            // verdict standing: the check binds to the interface and its addresses, and another
            // is due within the network's floor.
            guard let probe = verdict.probe, probe.result != .none else {
                // Not checked (or disabled) for this path; a "none" verdict for a reachable
                // path would contradict it and cannot come from a check that ran.
                return (.unknown, nil)
            }
            return (probe.result, probe)
        }
        if let previous, previous.reachable, previous.connectivity != .none {
            // Another reachable path: the old verdict stays until the check of the new one answers.
            return (previous.connectivity, previous.probe)
        }
        return (.unknown, nil)
    }
}
