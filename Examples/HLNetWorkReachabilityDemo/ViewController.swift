// HLNetWorkReachability's demo view controller, ported: what changed is the import (UIKit and
// the HLNetWorkReachability sources → Reachability), a print for the status label, the block
// form of addObserver (no selectors without the Objective-C runtime), and the deprecation
// attribute that keeps `swift build` free of warnings for code written in the iOS names.
import Foundation
import Reachability

@available(*, deprecated, message: "the iOS demo's code, in the iOS names")
final class ViewController {
    /// The iOS demo checked a remote host too; nil checks the internet connection only.
    var remoteHostName: String? = "www.apple.com"
    var hostReachability: HLNetWorkReachability?
    var internetReachability: HLNetWorkReachability!
    var observer: NSObjectProtocol?
    var statusLabel: (String) -> Void = { print($0) }

    func viewDidLoad() {
        observer = NotificationCenter.default.addObserver(
            forName: NSNotification.Name(rawValue: kNetWorkReachabilityChangedNotification), object: nil, queue: nil
        ) { [weak self] note in
            self?.reachabilityChanged(note)
        }

        if let remoteHostName {
            hostReachability = HLNetWorkReachability.reachability(withHostName: remoteHostName)
            hostReachability?.startNotifier()
        }

        internetReachability = HLNetWorkReachability.reachabilityForInternetConnection()
        internetReachability.startNotifier()
    }

    func reachabilityChanged(_ note: Notification) {
        guard let curReach = note.object as? HLNetWorkReachability else { return }
        let netStatus = curReach.currentReachabilityStatus()
        let target = curReach === hostReachability ? "host" : "internet"
        switch netStatus {
        case .notReachable: statusLabel("\(target): Not reachable")
        case .unknown: statusLabel("\(target): Unknown network")
        case .wwan2G: statusLabel("\(target): 2G")
        case .wwan3G: statusLabel("\(target): 3G")
        case .wwan4G: statusLabel("\(target): 4G")
        case .wiFi: statusLabel("\(target): WiFi")
        }
    }
}
