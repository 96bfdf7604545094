// swift-tools-version: 6.1
// Benchmarks with ordo-one/benchmark, apart from the package and its tests (as swift-nio keeps them), so
// neither a user's build nor `swift test` compiles the benchmark harness.
//
//   cd Benchmarks && swift package --disable-sandbox benchmark                    # run, print figures
//   cd Benchmarks && swift package --disable-sandbox benchmark thresholds check   # against Thresholds/
//
// The committed thresholds (Thresholds/*.json) are malloc counts, which do not depend on the machine's
// speed or load; CI checks them.
import Foundation
import PackageDescription

// A package depended on by path is named after its folder, which is whatever the clone was called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "OpenCoreMotionBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        // No traits: the delivery path needs only the API and ManualSource, so neither SwiftNIO, BoringSSL
        // nor GRDB is built (the release build takes minutes instead of most of an hour on 2 cores).
        .package(path: "..", traits: []),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "Delivery",
            dependencies: [
                .product(name: "OpenCoreMotion", package: root),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/Delivery",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
