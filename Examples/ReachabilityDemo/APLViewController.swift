// The Reachability sample's view controller (extended with 2G/3G/4G), ported: what changed is
// the import (UIKit and the sample's Reachability sources → Reachability), prints for the
// labels, the block form of addObserver, `try?` where Swift insists (`startNotifier()` throws
// here instead of returning NO), and the deprecation attribute that keeps `swift build` free of
// warnings for code written in the sample's names.
import Foundation
import Reachability

@available(*, deprecated, message: "the sample's code, in the sample's names")
final class APLViewController {
    var remoteHostName: String? = "www.apple.com"
    var hostReachability: Reachability?
    var internetReachability: Reachability!
    var observer: NSObjectProtocol?
    var summaryLabel: (String) -> Void = { print($0) }

    func viewDidLoad() {
        // Observe the kNetworkReachabilityChangedNotification. When that notification is posted,
        // the method reachabilityChanged will be called.
        observer = NotificationCenter.default.addObserver(
            forName: NSNotification.Name(rawValue: kReachabilityChangedNotification), object: nil, queue: nil
        ) { [weak self] note in
            self?.reachabilityChanged(note)
        }

        if let remoteHostName {
            hostReachability = Reachability.reachability(withHostName: remoteHostName)
            try? hostReachability?.startNotifier()
        }

        internetReachability = Reachability.reachabilityForInternetConnection()
        try? internetReachability.startNotifier()
    }

    /// Called by Reachability whenever status changes.
    func reachabilityChanged(_ note: Notification) {
        guard let curReach = note.object as? Reachability else { return }
        updateInterface(with: curReach)
    }

    func updateInterface(with reachability: Reachability) {
        let netStatus = reachability.currentReachabilityStatus()
        var connectionRequired = reachability.connectionRequired()
        var statusString: String
        // Expression patterns: Swift cannot see that the sample's constants cover every case.
        switch netStatus {
        case NotReachable:
            statusString = "Access Not Available"
            // Minor interface detail: connectionRequired may return YES even when the host is unreachable.
            connectionRequired = false
        case ReachableViaWWAN: statusString = "Reachable WWAN"
        case ReachableVia2G: statusString = "Reachable 2G"
        case ReachableVia3G: statusString = "Reachable 3G"
        case ReachableVia4G: statusString = "Reachable 4G"
        case ReachableViaWiFi: statusString = "Reachable WiFi"
        default: statusString = "Reachable (\(netStatus.rawValue))"
        }
        if connectionRequired {
            statusString += ", Connection Required"
        }
        let target = reachability === hostReachability ? "host" : "internet"
        summaryLabel("\(target): \(statusString)")
    }
}
