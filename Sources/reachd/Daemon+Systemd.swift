import FoundationEssentials
import ReachabilityCore
import ReachabilityLinux
import ReachabilitySystem

extension Daemon {
    /// The listening socket systemd passed (reachd.socket), or nil when started without one.
    func activatedSocket() -> Int32? {
        do {
            return try SystemdSocketActivation.passedUnixStreamListener()
        } catch {
            log.warning("ignoring passed sockets: \(error)")
            return nil
        }
    }

    /// READY=1 once the first full state is known and the socket listens, with STATUS=, and
    /// watchdog pings when the unit sets WatchdogSec=.
    func notifyReady(_ status: Status) {
        guard notifier.isEnabled else { return }
        _ = notifier.ready(status: status.systemdStatusText)
        // From the queue that runs the monitor and serves every client: if it wedges, the pings
        // stop and systemd restarts reachd (a queue of the watchdog's own would ping on).
        if let interval = notifier.startWatchdog(on: monitor?.queue) {
            log.debug("watchdog every \(interval)")
        }
    }

    /// Keeps systemd's STATUS= current; cheap when not under systemd.
    func notifyStatus(_ status: Status) {
        guard notifier.isEnabled else { return }
        _ = notifier.status(status.systemdStatusText)
    }

    /// `[Socket] Group=`: hands the socket file to that group, so only its members may connect
    /// when `Mode=` leaves others out.
    func applySocketGroup(path: String) throws {
        guard let group = configuration.socket.group, !group.isEmpty else { return }
        guard let gid = UserDatabase.groupID(named: group) else {
            throw SocketLocation.Failure(description: "[Socket] Group=\(group): no such group")
        }
        do {
            try FileSystem.setGroup(path, gid)
        } catch {
            throw SocketLocation.Failure(description: "cannot give \(path) to group \(group)", errno: error)
        }
    }
}
