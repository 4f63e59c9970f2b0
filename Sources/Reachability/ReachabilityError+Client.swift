import FoundationEssentials
import ReachabilityCore
import ReachabilityClient

extension ReachabilityError {
    /// Runs a call of `ReachabilityClient`: the client errors an app can act on (no daemon, an
    /// unusable socket) become `ReachabilityError`, others are rethrown as they are.
    static func translating<T>(_ call: () throws -> T) throws -> T {
        do {
            return try call()
        } catch ReachabilityClientError.daemonNotRunning(let path) {
            throw ReachabilityError.daemonNotRunning(socketPath: path)
        } catch ReachabilityClientError.connectionFailed(let path, let reason) {
            throw ReachabilityError.connectionFailed(socketPath: path, reason: reason.text)
        }
    }

    /// The daemon's status (`GetStatus`), asked on the calling thread.
    static func daemonStatus(socketPath: String, timeout: TimeInterval) throws -> Status {
        try translating { try ReachabilityClient(socketPath: socketPath, callTimeout: timeout).statusBlocking() }
    }
}
