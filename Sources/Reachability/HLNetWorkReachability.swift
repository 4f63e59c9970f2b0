import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// HLNetWorkReachability's status, with its numeric values. The library's `NetworkStatus` says
/// more (`ethernet`, `wwan5G`, an interface of unknown kind); `init(_:)` maps it the way the
/// iOS class would have seen that network.
@available(*, deprecated, renamed: "NetworkStatus")
public enum HLNetWorkStatus: UInt, Sendable, CaseIterable {
    case notReachable = 0
    /// Cellular of unknown generation (`NetworkStatus.wwan`).
    case unknown = 1
    case wwan2G = 2
    case wwan3G = 3
    case wwan4G = 4
    case wiFi = 9

    /// The iOS class's view of `status`: Ethernet and interfaces of unknown kind were "WiFi" to it
    /// (reachable, not WWAN); 5G, which it predates, is its fastest, `wwan4G`.
    public init(_ status: NetworkStatus) {
        switch status {
        case .notReachable: self = .notReachable
        case .wifi, .ethernet, .unknown: self = .wiFi
        case .wwan: self = .unknown
        case .wwan2G: self = .wwan2G
        case .wwan3G: self = .wwan3G
        case .wwan4G, .wwan5G: self = .wwan4G
        }
    }

    /// The library's name for this status (`.wiFi` is `.wifi`, `.unknown` is `.wwan`).
    public var networkStatus: NetworkStatus {
        switch self {
        case .notReachable: return .notReachable
        case .unknown: return .wwan
        case .wwan2G: return .wwan2G
        case .wwan3G: return .wwan3G
        case .wwan4G: return .wwan4G
        case .wiFi: return .wifi
        }
    }
}

/// HLNetWorkReachability, on `Reachability`: the iOS class's class methods, `startNotifier()` that
/// returns a `Bool`, `currentReachabilityStatus()` that returns an `HLNetWorkStatus`, and
/// `kNetWorkReachabilityChangedNotification` (`.reachabilityChanged`) posted with this object.
///
/// The inner `Reachability` posts its own notification to a private center, so an observer of
/// the iOS name sees each change once, with the `HLNetWorkReachability` as the object.
@available(*, deprecated, renamed: "Reachability")
public final class HLNetWorkReachability: @unchecked Sendable {
    /// The `Reachability` doing the work (its callbacks are this wrapper's).
    public let reachability: Reachability
    private let center = NotificationCenter.default

    init(_ reachability: Reachability) {
        self.reachability = reachability
        reachability.notificationCenter = NotificationCenter()
        let post: Reachability.NetworkReachable = { [weak self] _ in
            guard let self else { return }
            self.center.post(name: .reachabilityChanged, object: self)
        }
        reachability.whenReachable = post
        reachability.whenUnreachable = post
    }

    /// `+reachabilityWithHostName:`.
    public static func reachability(withHostName hostName: String) -> HLNetWorkReachability! {
        (try? Reachability(hostname: hostName)).map(HLNetWorkReachability.init)
    }

    /// `+reachabilityWithAddress:`; the zero address is the default route.
    public static func reachability(withAddress hostAddress: UnsafePointer<sockaddr>) -> HLNetWorkReachability! {
        (try? Reachability(address: hostAddress)).map(HLNetWorkReachability.init)
    }

    /// `+reachabilityForInternetConnection`.
    public static func reachabilityForInternetConnection() -> HLNetWorkReachability! {
        (try? Reachability()).map(HLNetWorkReachability.init)
    }

    /// `+reachabilityForInternetConnection` as Swift imported it.
    public static func forInternetConnection() -> HLNetWorkReachability! {
        reachabilityForInternetConnection()
    }

    /// `+reachabilityWithHostName:` as Swift imported it.
    public convenience init!(hostName: String) {
        guard let reachability = try? Reachability(hostname: hostName) else { return nil }
        self.init(reachability)
    }

    /// `+reachabilityWithAddress:` as Swift imported it.
    public convenience init!(address hostAddress: UnsafePointer<sockaddr>) {
        guard let reachability = try? Reachability(address: hostAddress) else { return nil }
        self.init(reachability)
    }

    /// Starts posting `kNetWorkReachabilityChangedNotification`, first for the current state;
    /// false when it cannot start (`Reachability.startNotifier()` throws the reason).
    @discardableResult
    public func startNotifier() -> Bool {
        (try? reachability.startNotifier()) != nil
    }

    public func stopNotifier() {
        reachability.stopNotifier()
    }

    /// The iOS class's status (inside the notification: the state it was posted for).
    public func currentReachabilityStatus() -> HLNetWorkStatus {
        HLNetWorkStatus(reachability.currentReachabilityStatus)
    }

    /// The 2G/3G/4G the network behaves like, measured (`Reachability.measuredReachabilityStatus`),
    /// beside the radio's `currentReachabilityStatus()`; nil while not measured.
    public func currentMeasuredReachabilityStatus() -> HLNetWorkStatus? {
        reachability.measuredReachabilityStatus.map(HLNetWorkStatus.init)
    }

    /// The queue notifications are posted on (`Reachability.callbackQueue`).
    public var callbackQueue: DispatchQueue {
        get { reachability.callbackQueue }
        set { reachability.callbackQueue = newValue }
    }
}
