import Testing
import TestSupport

/// Every suite of this target that creates network namespaces or starts daemons, HTTP servers or
/// dbus-daemons is nested in one of these two (`extension SystemTests { @Suite struct … }`), so
/// that within each one test runs at a time however `swift test` is invoked: on a small machine,
/// many parallel namespaces and daemons starve each other's waits. Pure unit suites stay outside
/// and run in parallel.
///
/// Their tests run on threads of their own (`.dedicatedThreads`), not on Swift's cooperative
/// pool: they block (namespaces, children, waits), and the pool has one thread per core.
///
/// This target's system tests are split in two lines because as one (250 s of tests in turn)
/// they were the longest line of the whole run: the connectivity check's suites (HTTP, TLS,
/// captive-portal APIs and the network's attacks on them, host checks) run under
/// `ConnectivitySystemTests`, beside the kernel's, the buses' and the monitor's here.
@Suite(.serialized, .dedicatedThreads) struct SystemTests {}

/// The connectivity check's half of this target's system tests (see `SystemTests`).
@Suite(.serialized, .dedicatedThreads) struct ConnectivitySystemTests {}
