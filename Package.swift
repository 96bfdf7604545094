// swift-tools-version: 6.1
//
// OpenCoreMotion: Apple's Core Motion API, sensor fusion and tools for Linux.
//
// Layers (lowest first):
//   MotionFusion        pure Swift maths and the attitude filter: no Foundation, no I/O
//   MotionSources       the SensorSource protocol, the simulator and the CSV replay
//   OpenCoreMotion      the public Core Motion API (CMMotionManager, CM* types, delivery)
//   CoreMotionCLI       the `coremotion` commands (swift-argument-parser), testable as a library
//   coremotion          the executable: a one-line main over CoreMotionCLI
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

let package = Package(
    name: "OpenCoreMotion",
    products: [
        .library(name: "OpenCoreMotion", targets: ["OpenCoreMotion"]),
        .library(name: "MotionFusion", targets: ["MotionFusion"]),
        .executable(name: "coremotion", targets: ["coremotion"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        .target(name: "MotionFusion", swiftSettings: swiftSettings),
        .target(
            name: "MotionSources",
            dependencies: ["MotionFusion"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "MotionSourcesLinux",
            dependencies: [
                "MotionFusion",
                "MotionSources",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "OpenCoreMotion",
            dependencies: [
                "MotionFusion",
                "MotionSources",
                "MotionSourcesLinux",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            resources: [.copy("Resources/WMM2025.COF")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "MotionBenchmarks",
            dependencies: ["MotionFusion"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoreMotionCLI",
            dependencies: [
                "OpenCoreMotion",
                "MotionBenchmarks",
                "MotionSourcesLinux",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "coremotion",
            dependencies: [
                "CoreMotionCLI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "MotionFusionTests", dependencies: ["MotionFusion"], swiftSettings: swiftSettings),
        .testTarget(
            name: "MotionBenchmarksTests",
            dependencies: ["MotionBenchmarks", "MotionFusion"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MotionFusionSimulationTests",
            dependencies: ["MotionFusion", "MotionSources"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MotionSourcesTests",
            dependencies: ["MotionSources", "MotionFusion"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OpenCoreMotionTests",
            dependencies: ["OpenCoreMotion", "MotionSources", "MotionFusion"],
            swiftSettings: swiftSettings
        ),
        // Apple's published listings are Swift 5 code; they must build with only the import changed.
        .testTarget(
            name: "AppleListingsTests",
            dependencies: ["OpenCoreMotion"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "MotionSourcesLinuxTests",
            dependencies: ["MotionSourcesLinux", "MotionSources", "MotionFusion", "OpenCoreMotion", "CoreMotionCLI", "coremotion"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoreMotionCLITests",
            dependencies: ["CoreMotionCLI", "coremotion"],
            swiftSettings: swiftSettings
        ),
    ]
)
