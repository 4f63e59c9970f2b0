// swift-tools-version:6.0
// An app outside the reachd package that depends on it by path, as a user's package would, and
// builds the README's Swift examples unchanged (`make external-package-test`, run.sh, writes
// them into Sources/SnippetApp and Sources/ClientSnippet).
import PackageDescription

let package = Package(
    name: "ExternalPackage",
    dependencies: [.package(name: "reachd", path: "../..")],
    targets: [
        .executableTarget(name: "SnippetApp", dependencies: [.product(name: "Reachability", package: "reachd")]),
        .executableTarget(name: "ClientSnippet", dependencies: [.product(name: "ReachabilityClient", package: "reachd")]),
    ]
)
