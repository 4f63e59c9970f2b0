// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "reachd",
    products: [
        .library(name: "Reachability", targets: ["Reachability"]),
        .library(name: "ReachabilityClient", targets: ["ReachabilityClient"]),
        .library(name: "ReachabilityCore", targets: ["ReachabilityCore"]),
        .executable(name: "reachd", targets: ["reachd"]),
        .executable(name: "reachctl", targets: ["reachctl"]),
        .executable(name: "reachd-dispatcher", targets: ["reachd-dispatcher"]),
    ],
    targets: [
        .systemLibrary(
            name: "CNetlink",
            pkgConfig: "libnl-route-3.0",
            providers: [.apt(["libnl-3-dev", "libnl-route-3-dev"])]
        ),
        // TLS for https checks and captive-portal APIs.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // The thin layer over Glibc: errno, descriptors, socket addresses, the calls around them.
        .target(name: "ReachabilitySystem"),
        .target(name: "ReachabilityCore", exclude: ["Varlink/io.reachd.Reachability.varlink"]),
        // Core's ports to the host through the system layer, with no C library but Glibc: the
        // configuration files and the stderr/journal log sink, shared by reachd and the dispatcher.
        .target(name: "ReachabilityHost", dependencies: ["ReachabilityCore", "ReachabilitySystem"]),
        .target(name: "ReachabilityLinux", dependencies: ["ReachabilityCore", "ReachabilityHost", "ReachabilitySystem", "CNetlink", "CSystemd", "COpenSSL"]),
        .target(name: "ReachabilityServer", dependencies: ["ReachabilityCore", "ReachabilityHost", "ReachabilitySystem"]),
        .target(name: "ReachabilityClient", dependencies: ["ReachabilityCore", "ReachabilitySystem"]),
        .target(name: "Reachability", dependencies: ["ReachabilityCore", "ReachabilityClient", "ReachabilityLinux", "ReachabilitySystem"]),
        .executableTarget(name: "reachd", dependencies: ["ReachabilityCore", "ReachabilityHost", "ReachabilityLinux", "ReachabilityServer", "ReachabilityClient", "ReachabilitySystem"]),
        .executableTarget(name: "reachctl", dependencies: ["ReachabilityCore", "ReachabilityClient", "ReachabilitySystem"]),
        // Starts the network targets and runs the dispatcher scripts, as root, on reachd's events.
        .executableTarget(name: "reachd-dispatcher", dependencies: ["ReachabilityCore", "ReachabilityClient", "ReachabilityHost", "ReachabilitySystem"]),
        // Fixtures shared by the test targets: namespaces, veth uplinks, shell helpers.
        .target(name: "TestSupport", dependencies: ["ReachabilitySystem"], path: "Sources/TestSupport"),
        .testTarget(name: "ReachabilityCoreTests", dependencies: ["ReachabilityCore", "TestSupport"]),
        .testTarget(name: "ReachabilitySystemTests", dependencies: ["ReachabilitySystem"]),
        // The executables' own logic, tested beside them: arguments, the dispatcher's rules.
        .testTarget(name: "ReachdTests", dependencies: ["reachd", "ReachabilityCore", "ReachabilityLinux", "ReachabilityServer"]),
        .testTarget(name: "ReachctlTests", dependencies: ["reachctl", "ReachabilityCore"]),
        .testTarget(name: "ReachdDispatcherTests", dependencies: ["reachd-dispatcher", "ReachabilityCore", "TestSupport"]),
        // CNetlink: libnl's own parsers, the reference the decoder is compared with.
        .testTarget(name: "ReachabilityLinuxTests", dependencies: ["ReachabilityCore", "ReachabilityHost", "ReachabilityLinux", "ReachabilitySystem", "TestSupport", "CNetlink"]),
        .testTarget(name: "ReachabilityServerTests", dependencies: ["ReachabilityCore", "ReachabilityServer", "ReachabilityClient", "ReachabilitySystem", "TestSupport"]),
        // End-to-end tests of the built reachd/reachctl binaries (REACHD_BIN_DIR) in network namespaces.
        .testTarget(name: "IntegrationTests", dependencies: ["ReachabilityCore", "ReachabilityClient", "ReachabilitySystem", "TestSupport", "reachd-dispatcher"]),
        // The app API against a real reachd in test namespaces.
        .testTarget(name: "ReachabilityTests", dependencies: ["Reachability", "ReachabilityClient", "ReachabilityLinux", "ReachabilitySystem", "TestSupport"]),
        // An app on the library without reachd, run by ReachabilityTests as a child process: what
        // it writes to stderr is what the app's users would see.
        .executableTarget(name: "InProcessApp", dependencies: ["Reachability"], path: "Tests/InProcessApp"),
        // Ports of the iOS classes' demos, built by `swift build`; Swift 5 mode, as their code was written.
        .executableTarget(name: "HLNetWorkReachabilityDemo", dependencies: ["Reachability"], path: "Examples/HLNetWorkReachabilityDemo",
                          swiftSettings: [.swiftLanguageMode(.v5)]),
        .executableTarget(name: "NetworkDetectorDemo", dependencies: ["Reachability"], path: "Examples/NetworkDetectorDemo",
                          swiftSettings: [.swiftLanguageMode(.v5)]),
        .executableTarget(name: "ReachabilityDemo", dependencies: ["Reachability"], path: "Examples/ReachabilityDemo",
                          swiftSettings: [.swiftLanguageMode(.v5)]),
        // How an app tests its reaction to the network with a SimulatedNetwork (docs/simulation.md, "Testing your app").
        .target(name: "OfflineBannerExample", dependencies: ["Reachability"], path: "Examples/OfflineBannerExample/Sources"),
        .testTarget(name: "OfflineBannerExampleTests", dependencies: ["OfflineBannerExample", "Reachability"],
                    path: "Examples/OfflineBannerExample/Tests"),
    ]
)
