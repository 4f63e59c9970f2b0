// swift-tools-version:6.0
// An app outside the reachd package that depends on it by path, as a user's package would, and
// runs the README's snippet unchanged (`make external-package-test`).
import PackageDescription

let package = Package(
    name: "ExternalPackage",
    dependencies: [.package(name: "reachd", path: "../..")],
    targets: [
        .executableTarget(name: "SnippetApp", dependencies: [.product(name: "Reachability", package: "reachd")]),
    ]
)
