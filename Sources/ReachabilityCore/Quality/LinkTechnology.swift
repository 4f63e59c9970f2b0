/// What an uplink is, as far as its quality can be guessed before anything is measured: its
/// kind and, for a modem, the generation of its radio.
public struct LinkTechnology: Equatable, Hashable, Sendable {
    public var kind: InterfaceKind
    /// The modem's generation (newest access technology), nil when not cellular or not known.
    public var generation: ModemAccessTechnology.Generation?

    public init(kind: InterfaceKind, generation: ModemAccessTechnology.Generation? = nil) {
        self.kind = kind
        self.generation = generation
    }

    /// The class a link of this technology usually has (Chromium's typical figures per
    /// connection type): wired and Wi-Fi `4g`, cellular its generation (5G counts as `4g`, the
    /// best the web names). Nil where nothing typical can be said (tunnels, virtual links, a
    /// modem of unknown generation).
    public var typicalType: LinkQuality.EffectiveType? {
        switch kind {
        case .ethernet, .wifi, .bridge: return .fourG
        case .wwan:
            switch generation {
            case .g2?: return .twoG
            case .g3?: return .threeG
            case .g4?, .g5?: return .fourG
            case nil: return nil
            }
        case .loopback, .vpn, .virtual, .other: return nil
        }
    }
}

/// An uplink as the link-quality estimator is told of it: a link that is up with carrier and a
/// usable default route, what it is, and its modem's radio.
public struct QualityUplink: Equatable, Sendable {
    public var index: Int
    public var name: String
    public var technology: LinkTechnology
    /// The radio's figures when a modem with `Modem.Signal` owns the link.
    public var signal: RadioSignal?

    public init(index: Int, name: String, technology: LinkTechnology, signal: RadioSignal? = nil) {
        self.index = index; self.name = name; self.technology = technology; self.signal = signal
    }
}
