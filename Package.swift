// swift-tools-version: 6.1
//
// OpenCoreMotion: Apple's Core Motion API, sensor fusion and tools for Linux.
//
// Layers (lowest first):
//   MotionFusion        pure Swift maths and the attitude filter: no Foundation, no I/O
//   MotionSources       the SensorSource protocol and the simulator
//   MotionRecordings    every recording format, read and written, streaming, merged by timestamp; replay, fuse
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
        // mqtts:// for the MQTT client (issue 14).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),
    ],
    targets: [
        .target(name: "MotionFusion", swiftSettings: swiftSettings),
        .target(
            name: "MotionSources",
            dependencies: ["MotionFusion"],
            swiftSettings: swiftSettings
        ),
        // zlib (zip entries) and strtod_l for MotionRecordings; needs zlib1g-dev on Linux.
        .systemLibrary(name: "CRecordingSupport", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "MotionRecordings",
            dependencies: ["MotionFusion", "MotionSources", "CRecordingSupport"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "MotionMQTT",
            dependencies: [
                "MotionSources",
                "MotionRecordings",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        // Phones streaming over the network (issue 10): Sensor Logger, SensorServer, SensorLog, HyperIMU.
        .target(
            name: "MotionPhones",
            dependencies: [
                "MotionFusion",
                "MotionSources",
                "MotionRecordings",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
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
                "MotionRecordings",
                "MotionSourcesLinux",
                "MotionRecorder",
                "MotionMQTT",
                "MotionPhones",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            resources: [.copy("Resources/WMM2025.COF")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "MotionBenchmarks",
            dependencies: ["MotionFusion", "MotionRecordings"],
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
                "MotionRecordings",
                "MotionSourcesLinux",
                "MotionDashboard",
                "MotionRecorder",
                "MotionMQTT",
                "MotionRecordings",
                "MotionPhones",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
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
            name: "MotionMQTTTests",
            dependencies: [
                "MotionMQTT",
                "MotionRecordings",
                "MotionSources",
                "MotionFusion",
                "coremotion",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MotionPhonesTests",
            dependencies: [
                "MotionPhones",
                "MotionSources",
                "MotionFusion",
                "MotionRecordings",
                "OpenCoreMotion",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            exclude: ["phone_emulator.py"],
            swiftSettings: swiftSettings
        ),
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
            dependencies: ["OpenCoreMotion", "MotionSources", "MotionFusion", "MotionRecorder", "MotionRecordings"],
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
            dependencies: ["CoreMotionCLI", "coremotion", "MotionRecorder", "MotionRecordings", "OpenCoreMotion", "MotionSources"],
            swiftSettings: swiftSettings
        ),
    ]
)
