// swift-tools-version:6.0
// The passive link-quality sampler's sock_diag dump in a loop: CPU per dump and the memory it
// adds (bench/sockdiag/run.sh builds it and runs it in namespaces of its own).
import PackageDescription

let package = Package(
    name: "sockdiag",
    dependencies: [.package(name: "reachd", path: "../..")],
    targets: [
        .executableTarget(name: "sockdiag", dependencies: [
            .product(name: "Reachability", package: "reachd"),
            .product(name: "ReachabilityCore", package: "reachd"),
        ]),
    ]
)
