// swift-tools-version: 6.1
//
// OpenCoreMotion: Apple's Core Motion API, sensor fusion and tools for Linux.
//
// Layers (lowest first):
//   MotionFusion        pure Swift maths and the attitude filter: no Foundation, no I/O
//   MotionSources       the SensorSource protocol, the simulator and the CSV replay
//   MotionRecordings    every recording format, read and written, streaming, merged by timestamp
//   MotionRecorder      the SQLite store of CMSensorRecorder (GRDB)
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
        // The live web dashboard (issue 5).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        // CMSensorRecorder's store (SQLite; needs libsqlite3-dev on Linux).
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .target(name: "MotionFusion", swiftSettings: swiftSettings),
        .target(
            name: "MotionSources",
            dependencies: ["MotionFusion"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "MotionRecordings",
            dependencies: ["MotionFusion", "MotionSources"],
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
            name: "MotionRecorder",
            dependencies: [
                "MotionSources",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "OpenCoreMotion",
            dependencies: [
                "MotionFusion",
                "MotionSources",
                "MotionSourcesLinux",
                "MotionRecorder",
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
            name: "MotionDashboard",
            dependencies: [
                "OpenCoreMotion",
                "MotionSources",
                "MotionFusion",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["PROTOCOL.md"],
            resources: [
                .embedInCode("Assets/index.html"),
                .embedInCode("Assets/dashboard.css"),
                .embedInCode("Assets/dashboard.js"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoreMotionCLI",
            dependencies: [
                "OpenCoreMotion",
                "MotionBenchmarks",
                "MotionSourcesLinux",
                "MotionDashboard",
                "MotionRecorder",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
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
            name: "MotionRecordingsTests",
            dependencies: ["MotionRecordings", "MotionSources", "MotionFusion"],
            swiftSettings: swiftSettings
        ),
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
            name: "MotionRecorderTests",
            dependencies: ["MotionRecorder"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OpenCoreMotionTests",
            dependencies: ["OpenCoreMotion", "MotionSources", "MotionFusion", "MotionRecorder"],
            swiftSettings: swiftSettings
        ),
        // Apple's published listings are Swift 5 code; they must build with only the import changed.
        .testTarget(
            name: "AppleListingsTests",
            dependencies: ["OpenCoreMotion", "MotionRecorder"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "MotionSourcesLinuxTests",
            dependencies: ["MotionSourcesLinux", "MotionSources", "MotionFusion", "OpenCoreMotion", "CoreMotionCLI", "coremotion"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MotionDashboardTests",
            dependencies: [
                "MotionDashboard",
                "OpenCoreMotion",
                "MotionSources",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoreMotionCLITests",
            dependencies: ["CoreMotionCLI", "coremotion", "MotionRecorder"],
            swiftSettings: swiftSettings
        ),
    ]
)
