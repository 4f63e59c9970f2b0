import FoundationEssentials
import ReachabilityCore
import ReachabilityClient
import ReachabilityServer
import ReachabilitySystem

/// Where the daemon listens and how it takes the path over (the order is `ReachabilitySocketPath`'s).
enum SocketLocation {
    /// Why the socket path cannot be used; `errno` when a system call said so.
    struct Failure: Error, CustomStringConvertible {
        let problem: String
        var errno: Errno?
        init(description: String, errno: Errno? = nil) { self.problem = description; self.errno = errno }
        var description: String { errno.map { "\(problem): \($0.text)" } ?? problem }
    }

    /// `--socket`, then `REACHD_SOCKET`, then `/run/reachd/…`, then `$XDG_RUNTIME_DIR/reachd/…`
    /// when /run/reachd cannot be created (not root). Creates the directory.
    static func resolve(explicit: String?, configured: String?, environment: [String: String],
                        log: LogSink) throws -> String {
        if let path = explicit ?? nonEmpty(environment[ReachabilitySocketPath.environmentVariable]) ?? configured {
            try makeDirectory(for: path)
            return path
        }
        let system = ReachabilitySocketPath.systemPath
        do {
            try makeDirectory(for: system)
            guard FileSystem.isWritable(parent(of: system)) else { throw Failure(description: "\(parent(of: system)) is not writable") }
            return system
        } catch {
            guard let user = ReachabilitySocketPath.userPath(environment: environment) else {
                throw Failure(description: "cannot use \(system) (\(error)) and XDG_RUNTIME_DIR is not set; use --socket PATH")
            }
            log.info("cannot use \(parent(of: system)) (\(error)); using \(user)")
            try makeDirectory(for: user)
            return user
        }
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }

    /// The directory part of `path`, as `NSString.deletingLastPathComponent` gives it:
    /// repeated and trailing slashes dropped, `/` for a top-level entry, "" for a bare name.
    static func parent(of path: String) -> String {
        var components = path.split(separator: "/", omittingEmptySubsequences: true)
        let absolute = path.hasPrefix("/")
        guard !components.isEmpty else { return absolute ? "/" : "" }
        components.removeLast()
        let joined = components.joined(separator: "/")
        return absolute ? "/" + joined : joined
    }

    private static func makeDirectory(for path: String) throws {
        let directory = parent(of: path)
        guard !directory.isEmpty else { return }
        if let kind = (try? FileSystem.status(of: directory, followingLinks: true))??.kind {
            guard kind == .directory else { throw Failure(description: "\(directory) is not a directory") }
            return
        }
        do {
            try FileSystem.createDirectories(directory, mode: 0o755)
        } catch {
            throw Failure(description: "cannot create \(directory)", errno: error)
        }
    }

    /// Makes `path` free for a new socket: refuses when another daemon answers there, removes a
    /// stale socket file (nobody listening), refuses to remove anything that is not a socket.
    static func claim(_ path: String) throws {
        let kind: FileStatus.Kind?
        do {
            kind = try FileSystem.status(of: path)?.kind
        } catch {
            // As before: a path that cannot be looked at is left for bind(2) to report.
            return
        }
        guard let kind else { return }   // nothing there
        guard kind == .socket else {
            throw Failure(description: "\(path) exists and is not a socket; not removing it")
        }
        do {
            let connection = try VarlinkConnection(socketPath: path, timeout: 2)
            connection.close()
            throw Failure(description: "another reachd is already running on \(path)")
        } catch ReachabilityClientError.daemonNotRunning {
            do {
                try FileSystem.remove(path)
            } catch {
                throw Failure(description: "cannot remove stale socket \(path)", errno: error)
            }
        }
    }
}
