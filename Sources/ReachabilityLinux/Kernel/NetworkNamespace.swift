import CNetlink
import FoundationEssentials
import ReachabilitySystem

/// Error from entering a network namespace: which path, and the failed call.
public struct NetworkNamespaceError: Error, CustomStringConvertible, Sendable {
    public let path: String
    public let errno: Errno
    public var description: String { "network namespace \(path): \(errno.text)" }
}

/// Runs code with the calling thread inside a named network namespace (`/run/netns/NAME`, as
/// `ip netns add` makes), then puts the thread back.
///
/// A socket belongs to the namespace it was created in for its whole life, so the adapters create
/// their sockets inside `run(in:)` and use them from any thread afterwards. This lets tests run the
/// monitor, the prober and route look-ups against namespaces they made, in one process.
/// `setns(2)` needs CAP_SYS_ADMIN; with `name == nil` the body just runs.
public enum NetworkNamespace {
    public static func run<T: ~Copyable>(in name: String?, _ body: () throws -> T) throws -> T {
        guard let name else { return try body() }
        let path = name.hasPrefix("/") ? name : "/run/netns/\(name)"
        let target = try open(path)
        let original = try open("/proc/thread-self/ns/net")
        // setns(2) through the C shim: glibc declares it only with _GNU_SOURCE.
        guard reachd_enter_netns(target.rawValue) == 0 else {
            throw NetworkNamespaceError(path: path, errno: Errno.current("setns", path: path))
        }
        defer {
            // Failing to return would leave a shared Dispatch worker thread in the test's namespace.
            if reachd_enter_netns(original.rawValue) != 0 { fatalError("cannot return to the original network namespace") }
        }
        return try body()
    }

    private static func open(_ path: String) throws(NetworkNamespaceError) -> FileDescriptor {
        do {
            return try FileDescriptor.open(path)
        } catch {
            throw NetworkNamespaceError(path: path, errno: error)
        }
    }
}
