#if canImport(Glibc)
import Glibc
#endif

/// What tests leave on the machine while they run: everything a test process makes outside
/// itself carries `rch<pid>-` at the start of its name (network namespaces `rch<pid>-<n><tag>`,
/// temporary directories and files `/tmp/rch<pid>-…`).
public enum TestResources {
    /// `rch<pid>-`, this process's mark at the start of what it makes.
    public static let prefix = "rch\(getpid())-"
}
