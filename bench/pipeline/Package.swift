// swift-tools-version:6.0
// The event path of reachd in a loop, outside the daemon; `make bench` builds and runs it (bench/run.sh).
import PackageDescription

let package = Package(
    name: "pipeline",
    dependencies: [.package(name: "reachd", path: "../..")],
    targets: [
        .executableTarget(name: "pipeline", dependencies: [.product(name: "ReachabilityCore", package: "reachd")]),
    ]
)
