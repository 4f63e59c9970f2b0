import Testing
import TestSupport

/// Every suite of this target that creates network namespaces or starts daemons, HTTP servers or
/// dbus-daemons is nested here (`extension SystemTests { @Suite struct … }`), so that they run one
/// test at a time however `swift test` is invoked: on a small machine, parallel namespaces and
/// daemons starve each other's waits. Pure unit suites stay outside and run in parallel.
/// Their tests run on threads of their own (`.dedicatedThreads`), not on Swift's cooperative
/// pool: they block (namespaces, children, waits), and the pool has one thread per core.
@Suite(.serialized, .dedicatedThreads) struct SystemTests {}
