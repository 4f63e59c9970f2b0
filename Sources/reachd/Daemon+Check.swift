import FoundationEssentials
import ReachabilityCore
import ReachabilityLinux
import ReachabilityServer

extension Daemon {
    /// Answers `io.reachd.Reachability.Check` with a `HostChecker` judged against the monitor's
    /// current status. Checks run on the checker's bounded pool of threads, so the
    /// server's queue, the monitor's queue and other clients never wait for a resolver; a
    /// caller that hangs up cancels its check.
    static func checkHandler(monitor: ReachabilityMonitor, checker: HostChecker = HostChecker()) -> ReachabilityServer.CheckHandler {
        return { host, port, completion in
            let cancellation = checker.check(host: host, port: port, status: { monitor.status }) { result in
                switch result {
                case let .success(answer):
                    completion(.reply("result", answer))
                case let .failure(error):
                    completion(.error(error.varlinkError))
                }
            }
            return { cancellation.cancel() }
        }
    }
}
