import CNetlink
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Error from entering a network namespace: which path, and the errno text.
public struct NetworkNamespaceError: Error, CustomStringConvertible, Sendable {
    public let path: String
    public let errno: Int32
    public var description: String { "network namespace \(path): \(String(cString: strerror(errno)))" }
}

/// Runs code with the calling thread inside a named network namespace (`/run/netns/NAME`, as
/// `ip netns add` makes), then puts the thread back.
///
/// A socket belongs to the namespace it was created in for its whole life, so the adapters create
/// their sockets inside `run(in:)` and use them from any thread afterwards. This lets tests run the
/// monitor, the prober and route look-ups against namespaces they made, in one process.
/// `setns(2)` needs CAP_SYS_ADMIN; with `name == nil` the body just runs.
public enum NetworkNamespace {
    public static func run<T>(in name: String?, _ body: () throws -> T) throws -> T {
        guard let name else { return try body() }
        let path = name.hasPrefix("/") ? name : "/run/netns/\(name)"
        let target = open(path, O_RDONLY | O_CLOEXEC)
        guard target >= 0 else { throw NetworkNamespaceError(path: path, errno: errno) }
        defer { close(target) }
        let original = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)
        guard original >= 0 else { throw NetworkNamespaceError(path: "/proc/thread-self/ns/net", errno: errno) }
        defer { close(original) }
        guard reachd_enter_netns(target) == 0 else { throw NetworkNamespaceError(path: path, errno: errno) }
        defer {
            // Failing to return would leave a shared Dispatch worker thread in the test's namespace.
            if reachd_enter_netns(original) != 0 { fatalError("cannot return to the original network namespace") }
        }
        return try body()
    }
}
