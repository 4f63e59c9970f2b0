extension Status {
    /// True when an interface shows an access point's address (`WiFi.bssid`): location data.
    public var showsLocation: Bool {
        primary?.wifi?.bssid != nil || vpn?.wifi?.bssid != nil || interfaces.contains { $0.wifi?.bssid != nil }
    }

    /// The status as a caller who is not root sees it: every `WiFi.bssid` null (an access
    /// point's address locates the machine, as Android and Apple hold); nil when there is
    /// none to take out.
    public var withoutLocation: Status? {
        guard showsLocation else { return nil }
        var copy = self
        copy.primary?.wifi?.bssid = nil
        copy.vpn?.wifi?.bssid = nil
        for index in copy.interfaces.indices { copy.interfaces[index].wifi?.bssid = nil }
        return copy
    }
}

extension ReachabilityEvent {
    /// The event as a caller who is not root sees it (`Status.withoutLocation`); nil when
    /// neither status shows an access point's address. `changes` stays as it is: a roam is
    /// still a change of `primary`, which the reason names.
    public var withoutLocation: ReachabilityEvent? {
        let current = self.current.withoutLocation, previous = self.previous?.withoutLocation
        guard current != nil || previous != nil else { return nil }
        var copy = self
        if let current { copy.current = current }
        if let previous { copy.previous = previous }
        return copy
    }
}
