import Foundation

private let promtoolPaths = ["/usr/bin/promtool", "/usr/local/bin/promtool"]
private let prometheusPaths = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"]

extension Requirement {
    /// `promtool` from Debian's `prometheus` package.
    public static let promtool = executable("promtool", at: promtoolPaths, install: "apt-get install -y prometheus (scripts/deps.sh)")
    /// The Prometheus server from Debian's `prometheus` package.
    public static let prometheus = executable("prometheus", at: prometheusPaths, install: "apt-get install -y prometheus (scripts/deps.sh)")
    /// `curl`, which the metrics tests scrape with inside their namespaces.
    public static let curl = executable("curl", at: ["/usr/bin/curl", "/bin/curl"], install: "apt-get install -y curl (scripts/deps.sh)")
}

/// The installed `promtool`, or an error naming the command that installs it.
public func promtoolPath() throws -> String { try firstExecutable(promtoolPaths, else: .promtool) }

/// The installed `prometheus`, or an error naming the command that installs it.
public func prometheusPath() throws -> String { try firstExecutable(prometheusPaths, else: .prometheus) }

private func firstExecutable(_ paths: [String], else requirement: Requirement) throws -> String {
    guard let path = paths.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        throw RequirementError(requirement: requirement)
    }
    return path
}
