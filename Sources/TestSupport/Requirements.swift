import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Something a test needs from the machine beyond the package: a tool, a Python package.
///
/// As root (how CI runs), a missing requirement is a failure that names the command installing
/// it; only without root is it a skip, through `.requires(_:)`, so that the test framework counts it.
public struct Requirement: Sendable, CustomStringConvertible {
    /// What is needed, e.g. "dbus-daemon".
    public let name: String
    /// The command that installs it.
    public let install: String
    private let isMetCheck: @Sendable () -> Bool

    public init(name: String, install: String, isMet: @escaping @Sendable () -> Bool) {
        self.name = name
        self.install = install
        self.isMetCheck = isMet
    }

    public var isMet: Bool { isMetCheck() }
    public var description: String { "\(name) (install: \(install))" }

    /// Throws, naming the install command, when the requirement is not met.
    public func check() throws {
        guard isMet else { throw RequirementError(requirement: self) }
    }

    /// One of `paths` is an executable file.
    public static func executable(_ name: String, at paths: [String], install: String) -> Requirement {
        Requirement(name: name, install: install) { paths.contains { FileManager.default.isExecutableFile(atPath: $0) } }
    }

    public static let dbusDaemon = executable("dbus-daemon", at: ["/usr/bin/dbus-daemon", "/bin/dbus-daemon"],
                                              install: "apt-get install -y dbus (scripts/deps.sh)")
    public static let busctl = executable("busctl", at: ["/usr/bin/busctl", "/bin/busctl"],
                                          install: "apt-get install -y systemd (scripts/deps.sh)")
    public static let socketActivate = executable("systemd-socket-activate", at: ["/usr/bin/systemd-socket-activate"],
                                                  install: "apt-get install -y systemd (scripts/deps.sh)")
    public static let python3 = executable("python3", at: ["/usr/bin/python3"], install: "apt-get install -y python3 (scripts/deps.sh)")
    /// The package's virtual environment with python-dbusmock and dbus-python.
    public static let dbusMock = Requirement(name: "python-dbusmock in .venv", install: "scripts/deps.sh (pip install python-dbusmock dbus-python into .venv)") {
        FileManager.default.isExecutableFile(atPath: Paths.venvPython)
            && (try? sh("\(Paths.venvPython) -c 'import dbusmock, dbus'", check: false).status) == 0
    }
    /// The package's virtual environment with the PyPI varlink client.
    public static let pythonVarlink = Requirement(name: "python varlink in .venv", install: "scripts/deps.sh (pip install varlink into .venv)") {
        FileManager.default.isExecutableFile(atPath: Paths.venvPython)
            && (try? sh("\(Paths.venvPython) -c 'import varlink'", check: false).status) == 0
    }
}

public struct RequirementError: Error, CustomStringConvertible {
    public let requirement: Requirement
    public var description: String { "\(requirement.name) is missing: run \(requirement.install)" }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only as root (namespaces, veth pairs, daemons in them); without root it is
    /// reported as skipped with `why`. Same as `.enabled(if: getuid() == 0, "needs root: …")`.
    public static func needsRoot(_ why: String = "creates network namespaces") -> Self {
        .enabled(if: isRoot, "needs root: \(why)")
    }

    /// Skips the test (counted as skipped) when a requirement is missing and we are not root.
    /// As root the test runs and its set-up fails, naming the install command: CI must never
    /// pass by not testing. The test (or its fixture) calls `Requirement.check()`.
    public static func requires(_ requirements: Requirement...) -> Self {
        let names = requirements.map(\.description).joined(separator: ", ")
        return .enabled("needs \(names)") { isRoot || requirements.allSatisfy(\.isMet) }
    }
}

/// Where the package and its build products are.
public enum Paths {
    /// The package root, from this file's path (Sources/TestSupport/…).
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The venv python that `scripts/deps.sh` sets up (python-dbusmock, varlink).
    public static var venvPython: String { packageRoot + "/.venv/bin/python" }

    /// A file of the repository by its relative path.
    public static func file(_ relative: String) -> String { packageRoot + "/" + relative }
}
