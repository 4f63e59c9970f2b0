import Testing
import TestSupport

/// Every suite of this target that creates network namespaces or starts daemons, HTTP servers or
/// dbus-daemons is nested in one of these three (`extension SystemTests { @Suite struct … }`), so
/// that within each one test runs at a time however `swift test` is invoked: on a small machine,
/// many parallel namespaces and daemons starve each other's waits. Pure unit suites stay outside
/// and run in parallel.
///
/// This target's system tests are split in three lines because as one they were the longest
/// line of the whole run: the service-level suites (the daemon's life, the dispatcher, metrics
/// and Prometheus) run under `ServiceSystemTests`, the connectivity check's end to end (probe,
/// portal, families, `reachctl check`, the network's attacks) under `ConnectivitySystemTests`,
/// beside the rest.
///
/// Their tests run on threads of their own (`.dedicatedThreads`), not on Swift's cooperative
/// pool: they block (namespaces, children, waits), and the pool has one thread per core.
@Suite(.serialized, .dedicatedThreads) struct SystemTests {}

/// The service-level line of this target's system tests (see `SystemTests`).
@Suite(.serialized, .dedicatedThreads) struct ServiceSystemTests {}

/// The connectivity check's end-to-end suites (see `SystemTests`).
@Suite(.serialized, .dedicatedThreads) struct ConnectivitySystemTests {}
