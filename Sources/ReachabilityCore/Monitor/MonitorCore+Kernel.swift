import FoundationEssentials

// The kernel's messages and dumps: applied to the table, what they changed handed to the scheduler.
extension MonitorCore {
    /// One drain of the netlink socket, gathered message by message (`received`) and handed over
    /// whole (`readEnded`), so that a burst is classified once.
    public struct Read: Sendable {
        /// The clock reading of the whole drain: the messages' receipt, the debounce, the timing.
        public let now: ClockReading
        var changes = MonitorScheduler.KernelChanges()
        var actions: [Action] = []

        public init(now: ClockReading) {
            self.now = now
            changes.readStarted = now.uptime
        }

        /// The kernel overran the socket: messages were lost (the table is read again).
        public mutating func overran() { changes.overrun = true }
    }

    /// The shell must read sysfs for this link before handing its message over: the core knows
    /// no link by this index and name yet (a new link, or one renamed).
    public func needsKindFacts(for link: LinkFacts) -> Bool {
        kindFacts[link.index]?.name != link.name
    }

    /// One decoded message of `read`; `kindFacts`: what sysfs says about the link of a `.link`
    /// message for which `needsKindFacts` held (nil otherwise).
    public mutating func received(_ change: KernelChange, kindFacts facts: InterfaceKindFacts?, into read: inout Read) {
        switch change {
        case .link(let link):
            if let facts { kindFacts[link.index] = facts }
        case .linkRemoved(let index):
            // A new link may reuse the index and name of a deleted one: its kind is decided afresh.
            linkVerdicts[index] = nil
            kindFacts[index] = nil
            leaseMetered[index] = nil
            costFlips.forget(index)
            read.actions.append(.forgetLease(index))
        case .routerOptionRejected(let index, let error):
            let (allowed, suppressed) = logLimits.option.admit(now: read.now.uptime)
            if allowed {
                read.actions.append(.log(.notice, "ignored a \(error) on \(table.links[index]?.name ?? "interface \(index)")"
                                         + (suppressed > 0 ? " (\(suppressed) more suppressed)" : "")))
            }
            return
        case .addressAdded, .addressRemoved, .routeAdded, .routeRemoved, .ruleAdded, .ruleRemoved, .routerOption:
            break
        }
        read.changes.apply(change, to: &table, receivedAt: read.now.uptime)
    }

    /// `received(_:kindFacts:into:)`, with `readKindFacts` asked for what sysfs says only when
    /// `needsKindFacts` holds. The shell's drain: asking the core in place, it never copies it.
    public mutating func received(_ change: KernelChange, into read: inout Read,
                                  readingKindFacts readKindFacts: (LinkFacts) -> InterfaceKindFacts) {
        var facts: InterfaceKindFacts?
        if case .link(let link) = change, needsKindFacts(for: link) { facts = readKindFacts(link) }
        received(change, kindFacts: facts, into: &read)
    }

    /// A datagram that another process sent, not the kernel (dropped; logged a few times a minute).
    public mutating func foreignDatagram(port: UInt32, into read: inout Read) {
        let (allowed, suppressed) = logLimits.foreign.admit(now: read.now.uptime)
        if allowed {
            read.actions.append(.log(.warning, "dropped a netlink message sent by another process (port \(port)), not the kernel"
                                     + (suppressed > 0 ? " (\(suppressed) more suppressed)" : "")))
        }
    }

    /// The drain is over: what it changed goes to the scheduler.
    public mutating func readEnded(_ read: Read) -> [Action] {
        var actions = read.actions
        let changes = read.changes
        if !changes.contents.isEmpty || changes.rules || changes.overrun { actions.append(.routingChanged) }
        // A new lease comes with its address: read it.
        if !changes.contents.isEmpty { actions.append(.refreshLeases(changes.contents.sorted())) }
        run(scheduler.kernelChanged(changes, nextExpiry: table.nextAnnouncementDeadline, now: read.now), now: read.now, into: &actions)
        return actions
    }

    /// The dump asked by `.rereadKernel`: `fresh` in place of the table (nil: it failed, the
    /// table stays), with the sysfs facts of its links. No dump tells what routers announced:
    /// what has not run out is kept for the links still there.
    public mutating func kernelDumped(_ fresh: KernelStateTable?, kindFacts: [Int: InterfaceKindFacts],
                                      now: ClockReading) -> [Action] {
        var actions: [Action] = []
        if var fresh {
            fresh.adoptAnnouncements(from: table)
            table = fresh
            self.kindFacts = kindFacts
            linkVerdicts = [:]
            actions.append(.routingChanged)
            actions.append(.refreshLeases(table.links.keys.sorted()))
        }
        run(scheduler.kernelReread(succeeded: fresh != nil, nextExpiry: table.nextAnnouncementDeadline, now: now),
            now: now, into: &actions)
        return actions
    }
}
