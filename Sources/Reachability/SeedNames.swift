import Foundation
#if canImport(Glibc)
import Glibc
#endif

// The names iOS code written against the classes this library ports uses — Apple's Reachability sample extended with 2G/3G/4G,
// HLNetWorkReachability, NetworkDetector — as deprecated aliases of this library's names, so
// that such code builds after changing its import, and the compiler names the new spelling.
// docs/swift.md's "Coming from iOS" table lists them all.

// MARK: - Apple's Reachability sample (with 2G/3G/4G): `NetworkStatus` constants

@available(*, deprecated, renamed: "NetworkStatus.notReachable")
public let NotReachable: NetworkStatus = .notReachable
@available(*, deprecated, renamed: "NetworkStatus.wifi")
public let ReachableViaWiFi: NetworkStatus = .wifi
/// Cellular of unknown generation (a known one is `ReachableVia2G/3G/4G`, as in the sample).
@available(*, deprecated, renamed: "NetworkStatus.wwan")
public let ReachableViaWWAN: NetworkStatus = .wwan
@available(*, deprecated, renamed: "NetworkStatus.wwan2G")
public let ReachableVia2G: NetworkStatus = .wwan2G
@available(*, deprecated, renamed: "NetworkStatus.wwan3G")
public let ReachableVia3G: NetworkStatus = .wwan3G
@available(*, deprecated, renamed: "NetworkStatus.wwan4G")
public let ReachableVia4G: NetworkStatus = .wwan4G

// MARK: - Notification names

/// The iOS classes' `extern NSString *` names, as Swift saw them (`String`): the same notification as
/// `.reachabilityChanged`, so an observer of either name gets every change.
@available(*, deprecated, renamed: "Notification.Name.reachabilityChanged")
public let kReachabilityChangedNotification: String = Notification.Name.reachabilityChanged.rawValue
@available(*, deprecated, renamed: "Notification.Name.reachabilityChanged")
public let kNetWorkReachabilityChangedNotification: String = Notification.Name.reachabilityChanged.rawValue

extension Notification.Name {
    @available(*, deprecated, renamed: "reachabilityChanged")
    public static let kReachabilityChangedNotification = Notification.Name.reachabilityChanged
    @available(*, deprecated, renamed: "reachabilityChanged")
    public static let kNetWorkReachabilityChangedNotification = Notification.Name.reachabilityChanged
}

// MARK: - The sample's class methods and accessors on `Reachability`

extension Reachability {
    /// `+reachabilityForInternetConnection`: the default route. nil when it cannot be made.
    @available(*, deprecated, renamed: "init()")
    public static func reachabilityForInternetConnection() -> Reachability! {
        try? Reachability()
    }

    /// `+reachabilityForInternetConnection` as Swift imported it.
    @available(*, deprecated, renamed: "init()")
    public static func forInternetConnection() -> Reachability! {
        try? Reachability()
    }

    /// `+reachabilityWithHostName:`.
    @available(*, deprecated, renamed: "init(hostname:)")
    public static func reachability(withHostName hostName: String) -> Reachability! {
        try? Reachability(hostname: hostName)
    }

    /// `+reachabilityWithHostName:` as Swift imported it (a failable initializer).
    @available(*, deprecated, renamed: "init(hostname:)")
    public convenience init!(hostName: String) {
        do { try self.init(hostname: hostName) } catch { return nil }
    }

    /// `+reachabilityWithAddress:` with an address literal.
    @available(*, deprecated, renamed: "init(address:)")
    public static func reachability(withAddress address: String) -> Reachability! {
        try? Reachability(address: address)
    }

    /// `+reachabilityWithAddress:(const struct sockaddr *)`; the zero address (0.0.0.0, ::) is
    /// the default route, as the sample's `reachabilityForInternetConnection` used it.
    @available(*, deprecated, renamed: "init(address:)")
    public static func reachability(withAddress hostAddress: UnsafePointer<sockaddr>) -> Reachability! {
        try? Reachability(address: hostAddress)
    }

    /// The older sample's `+reachabilityWithAddress:(const struct sockaddr_in *)`.
    @available(*, deprecated, renamed: "init(address:)")
    public static func reachability(withAddress hostAddress: UnsafePointer<sockaddr_in>) -> Reachability! {
        hostAddress.withMemoryRebound(to: sockaddr.self, capacity: 1) { try? Reachability(address: $0) }
    }

    /// `- (BOOL)connectionRequired`: a link is there but no address or route yet.
    @available(*, deprecated, renamed: "isConnectionRequired")
    public func connectionRequired() -> Bool {
        isConnectionRequired
    }
}

extension NetworkStatus {
    /// Lets the sample's `reachability.currentReachabilityStatus()` (a method in Objective-C)
    /// build: in this library it is a property.
    @available(*, deprecated, message: "currentReachabilityStatus is a property: drop the ()")
    public func callAsFunction() -> NetworkStatus { self }
}

// MARK: - NetworkDetector

extension NetworkDetector {
    @available(*, deprecated, renamed: "shared")
    public static var sharedInstance: NetworkDetector { shared }
}

extension NetworkStatus {
    /// The cellular generation a measured `effectiveType` behaves like: `slow-2g` and `2g` are
    /// `.wwan2G`, `3g` `.wwan3G`, `4g` `.wwan4G` (the web's scale stops at 4g).
    public init(measured type: LinkQuality.EffectiveType) {
        switch type {
        case .slow2g, .twoG: self = .wwan2G
        case .threeG: self = .wwan3G
        case .fourG: self = .wwan4G
        }
    }
}
