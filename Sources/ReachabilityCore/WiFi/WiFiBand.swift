/// The band a Wi-Fi channel is in, told from its centre frequency.
public enum WiFiBand: String, CaseIterable, Equatable, Hashable, Sendable {
    /// 2.4 GHz: channels 1–14 (2412–2484 MHz).
    case band2_4GHz = "2.4GHz"
    /// 5 GHz: channels 32–177 (5160–5885 MHz).
    case band5GHz = "5GHz"
    /// 6 GHz: channels 1–233 (5955–7115 MHz), Wi-Fi 6E and later.
    case band6GHz = "6GHz"

    /// The band of a channel centred at `frequencyMHz`; nil outside the three bands (the 4.9 GHz
    /// public-safety channels, 60 GHz, or a figure no radio sends).
    public init?(frequencyMHz: Int) {
        switch frequencyMHz {
        case 2412...2484: self = .band2_4GHz
        case 5160...5885: self = .band5GHz
        case 5955...7115: self = .band6GHz
        default: return nil
        }
    }
}
