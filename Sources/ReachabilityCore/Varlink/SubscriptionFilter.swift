/// Which events one subscriber receives: all of them, or — with `Subscribe(changes:)` or its
/// shorthand `statusOnly` (status, connectivity, primary) — only those that change one of the
/// named `Status` fields.
public struct SubscriptionFilter: Sendable {
    /// The fields the subscriber asked for; nil: every event.
    public let fields: Set<Status.Field>?
    /// The status the subscriber was last sent (its view of the machine).
    public private(set) var lastSent: Status?

    /// - Parameters:
    ///   - fields: the fields whose changes the subscriber wants; nil for every event.
    ///   - lastSent: what the subscriber already saw (when it resumes), if known.
    public init(fields: Set<Status.Field>?, lastSent: Status? = nil) {
        self.fields = fields
        self.lastSent = lastSent
    }

    /// `statusOnly` and `changes` as `Subscribe` takes them: together they add up.
    public init(statusOnly: Bool, changes: Set<Status.Field>? = nil, lastSent: Status? = nil) {
        let essential: Set<Status.Field>? = statusOnly ? Status.essentialFields : nil
        switch (essential, changes) {
        case (nil, nil): self.init(fields: nil, lastSent: lastSent)
        case (let a?, nil): self.init(fields: a, lastSent: lastSent)
        case (nil, let b?): self.init(fields: b, lastSent: lastSent)
        case (let a?, let b?): self.init(fields: a.union(b), lastSent: lastSent)
        }
    }

    /// The fields named by `names` (`Subscribe(changes:)`); nil when one is not a field name
    /// (`since` is none: it changes with every event) or the list is empty (it would admit nothing).
    public static func fields(named names: [String]) -> Set<Status.Field>? {
        var fields: Set<Status.Field> = []
        for name in names {
            guard let field = Status.Field(rawValue: name) else { return nil }
            fields.insert(field)
        }
        return fields.isEmpty ? nil : fields
    }

    /// True when only some events go out (the server then keeps `lastSent` per subscriber).
    public var filters: Bool { fields != nil }

    /// Decides whether to send `event`, and remembers it when so. `initial` events, and anything
    /// when nothing was sent yet, always go out.
    public mutating func admit(_ event: ReachabilityEvent) -> Bool {
        if let fields, event.event == .reachabilityChanged, let lastSent,
           // Compared with what this subscriber saw, not with `previous`: several small changes
           // that add up to one it asked for are still reported. Over a stream without gaps this
           // is exactly "the event's `changes` name one of `fields`".
           !fields.contains(where: { event.current.differs(in: $0, from: lastSent) }) {
            return false
        }
        lastSent = event.current
        return true
    }
}
