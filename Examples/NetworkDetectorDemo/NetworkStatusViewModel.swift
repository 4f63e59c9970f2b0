// NetworkDetector's demo view model, ported: what changed is the import (Combine and the
// NetworkDetector source → Reachability), the backend URL (the iOS original had its backend's URL
// in NetworkDetector; here the app sets `backendURL`), prints for the view's state, and the
// deprecation attribute that keeps `swift build` free of warnings for code in the iOS names.
import Foundation
import Reachability

@available(*, deprecated, message: "the iOS demo's code, in the iOS names")
final class NetworkStatusViewModel {
    private var cancellables = Set<AnyCancellable>()
    var show: (String) -> Void = { print($0) }

    func checkNetwork(done: @escaping () -> Void) {
        NetworkDetector.sharedInstance.checkNetworkReachability { [show] isReachable, statusCode, error in
            if isReachable {
                show("callback: reachable (HTTP \(statusCode))\(onMainQueue)")
            } else {
                show("callback: not reachable (HTTP \(statusCode)): \(error.map { "\($0)" } ?? "")\(onMainQueue)")
            }
            done()
        }
    }

    func observeNetwork(done: @escaping () -> Void) {
        NetworkDetector.sharedInstance.networkReachabilityPublisher
            .receive(on: DispatchQueue.main)
            .sink(receiveCompletion: { [show] completion in
                if case .failure(let error) = completion {
                    show("publisher: failed with HTTP \(error.statusCode): \(error)")
                }
                done()
            }, receiveValue: { [show] isReachable in
                show("publisher: reachable \(isReachable)")
            })
            .store(in: &cancellables)
    }
}

/// Added to the iOS demo's output: which queue the completion ran on.
var onMainQueue: String {
    DispatchQueue.getSpecific(key: mainQueueKey) == true ? " [main queue]" : " [other queue]"
}
let mainQueueKey = DispatchSpecificKey<Bool>()
