// swift-tools-version: 6.1
//
// OpenCoreMotion: Apple's Core Motion API, sensor fusion and tools for Linux.
//
// Products: the library OpenCoreMotion (re-exports MotionFusion and MotionSources), the library
// MotionFusion, the executable coremotion. Traits (all on by default): LinuxHardware links
// MotionSourcesLinux into OpenCoreMotion, Recorder links MotionRecorderStore (GRDB, SQLite), NetworkSources
// links MotionMQTT and MotionPhones (SwiftNIO, NIOSSL/BoringSSL). Each linked module registers its source
// family (MotionSources' SourceProvider) in OpenCoreMotion's SourceCatalog; a family whose trait is off
// fails with an error naming the trait. With `traits: []` OpenCoreMotion is the API, the simulator and
// replay only, and an app's first debug build compiles no SwiftNIO, BoringSSL or GRDB
// (scripts/light-import checks it and times each trait set; figures in the README under "Package traits").
// The coremotion CLI, the benchmarks and the dashboard always have everything.
// Public declarations per module (scripts/public-symbols) in brackets.
//
// Targets (lowest layer first):
//   MotionFusion               [544] the maths and the attitude filter, batch calibration: pure Swift, no Foundation, no I/O
//   MotionSources              [166] SensorSource, SourceEvent, the simulator, ManualSource, barometers as sources
//                                    (PolledBarometerSource), the source runtime (SourceWorker) and the lock
//                                    family (Locked, ConditionLocked: package access)
//   CRecordingSupport                zlib and strtod_l (system library) for MotionRecordingFormats
//   MotionRecordingFormats       [0] every recording format, read and written, streaming, merged; replay; fuse
//   MotionSourcesLinux           [0] IIO and evdev sources, mount matrices, discovery (trait LinuxHardware; package API)
//   MotionSourcesLinuxTesting    [0] test twins: in-memory sysfs, /dev and evdev nodes (tests and fuzzing only)
//   MotionRecorderStore          [0] the SQLite store of CMSensorRecorder through GRDB (trait Recorder; package API)
//   MotionWebSocketHandshake     [0] the WebSocket client handshake shared by MotionMQTT and MotionPhones (SwiftNIO)
//   MotionMQTT                   [0] the MQTT 3.1.1 client on SwiftNIO, the broker source, the publisher
//   MotionPhones                 [0] phone apps streaming over the network as sources (SwiftNIO)
//   OpenCoreMotion             [501] the public Core Motion API (CMMotionManager, CM* types, the hub, delivery)
//   MotionBenchmarks             [0] the benchmark harnesses: BROAD, fusion throughput, step counting, IIO latency,
//                                    fuse time and memory, phone and MQTT fleet delivery, handler delivery and soaks,
//                                    the dashboard server under load (the `bench` commands print them)
//   MotionDashboard              [0] the live web dashboard (Hummingbird)
//   CoreMotionCLI                [0] the `coremotion` commands (swift-argument-parser), testable as a library
//   coremotion                       the executable: a one-line main over CoreMotionCLI
// Tests: one test target per module (…Tests), MotionFusionSimulationTests (the filter against the
// simulator's truth), AppleListingsTests (Apple's published listings, Swift 5 mode), LinuxKernelTests
// (real drivers of Debian's kernel in a QEMU VM, scripts/vm), iOSStyleTests and iOSStyleSwift6Tests
// (subclass and protocol mocks as iOS suites write them, Swift 5 and 6 modes), MotionTestSupport (child
// processes and gates shared by the test targets).
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
    traits: [
        .trait(name: "LinuxHardware", description: "IIO and evdev sources and IIO barometers (MotionSourcesLinux) in OpenCoreMotion"),
        .trait(name: "Recorder", description: "CMSensorRecorder's SQLite store and CMPedometer's history (MotionRecorderStore, GRDB) in OpenCoreMotion"),
        .trait(name: "NetworkSources", description: "MQTT brokers and phone apps as sources (MotionMQTT, MotionPhones: SwiftNIO, NIOSSL/BoringSSL) in OpenCoreMotion"),
        .default(enabledTraits: ["LinuxHardware", "Recorder", "NetworkSources"]),
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
        // zlib (zip entries) and strtod_l for MotionRecordingFormats; needs zlib1g-dev on Linux.
        .systemLibrary(name: "CRecordingSupport", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "MotionRecordingFormats",
            dependencies: ["MotionFusion", "MotionSources", "CRecordingSupport"],
            swiftSettings: swiftSettings
        ),
        // The WebSocket client handshake shared by MotionMQTT and MotionPhones (SwiftNIO only).
        .target(
            name: "MotionWebSocketHandshake",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "MotionMQTT",
            dependencies: [
                "MotionSources",
                "MotionWebSocketHandshake",
                "MotionRecordingFormats",
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
                "MotionWebSocketHandshake",
                "MotionSources",
                "MotionRecordingFormats",
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
        // Test twins of sysfs, /dev and evdev nodes: used by tests and the fuzz targets only.
        .target(
            name: "MotionSourcesLinuxTesting",
            dependencies: ["MotionSources", "MotionSourcesLinux", "MotionFusion"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "MotionRecorderStore",
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
                "MotionRecordingFormats",
                .target(name: "MotionSourcesLinux", condition: .when(traits: ["LinuxHardware"])),
                .target(name: "MotionRecorderStore", condition: .when(traits: ["Recorder"])),
                .target(name: "MotionMQTT", condition: .when(traits: ["NetworkSources"])),
                .target(name: "MotionPhones", condition: .when(traits: ["NetworkSources"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            resources: [.copy("Resources/WMM2025.COF")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "MotionBenchmarks",
            dependencies: [
                "MotionFusion", "MotionSources", "MotionRecordingFormats", "MotionSourcesLinux", "OpenCoreMotion", "MotionPhones",
                "MotionMQTT", "MotionDashboard",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "MotionDashboard",
            dependencies: [
                .product(name: "DequeModule", package: "swift-collections"),
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
                "MotionRecordingFormats",
                "MotionSourcesLinux",
                "MotionDashboard",
                "MotionRecorderStore",
                "MotionMQTT",
                "MotionPhones",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
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
        // Shared by the test targets: child processes awaited without holding a test thread, and the
        // gate that runs the heavy end-to-end work (VMs, the browser, soaks) one at a time.
        .target(name: "MotionTestSupport", dependencies: ["MotionSources"], path: "Tests/MotionTestSupport", swiftSettings: swiftSettings),
        .testTarget(name: "MotionFusionTests", dependencies: ["MotionFusion"], swiftSettings: swiftSettings),
        .testTarget(
            name: "MotionMQTTTests",
            dependencies: [
                "MotionMQTT",
                "MotionRecordingFormats",
                "MotionSources",
                "MotionFusion",
                "coremotion",
                "MotionTestSupport",
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
                "MotionRecordingFormats",
                "OpenCoreMotion",
                "MotionTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            exclude: ["phone_emulator.py"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MotionRecordingFormatsTests",
            dependencies: ["MotionRecordingFormats", "MotionSources", "MotionFusion", "MotionTestSupport"],
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
            dependencies: ["MotionSources", "MotionFusion", "MotionTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MotionRecorderStoreTests",
            dependencies: ["MotionRecorderStore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OpenCoreMotionTests",
            dependencies: ["OpenCoreMotion", "MotionSources", "MotionFusion", "MotionRecorderStore", "MotionRecordingFormats", "MotionSourcesLinuxTesting",
                           "MotionTestSupport"],
            swiftSettings: swiftSettings
        ),
        // Apple's published listings are Swift 5 code; they must build with only the import changed.
        .testTarget(
            name: "AppleListingsTests",
            dependencies: ["OpenCoreMotion", "MotionRecorderStore", "MotionTestSupport"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // Tests written the way iOS suites are (subclass and protocol mocks, XCTest and Swift Testing),
        // in Swift 5 mode as most iOS code is; they must build with only the import changed.
        .testTarget(
            name: "iOSStyleTests",
            dependencies: ["OpenCoreMotion"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // The same files (symbolic links to iOSStyleTests) in Swift 6 mode, as newer iOS projects build.
        .testTarget(
            name: "iOSStyleSwift6Tests",
            dependencies: ["OpenCoreMotion"],
            // Warnings are errors here: iOS test code must compile warning-free, not only compile.
            swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-warnings-as-errors"])]
        ),
        .testTarget(
            name: "MotionSourcesLinuxTests",
            dependencies: ["MotionSourcesLinux", "MotionSourcesLinuxTesting", "MotionSources", "MotionFusion", "OpenCoreMotion", "MotionTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MotionDashboardTests",
            dependencies: [
                "MotionDashboard",
                "OpenCoreMotion",
                "MotionSources",
                "MotionTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: swiftSettings
        ),
        // The VM rig (scripts/vm): Debian's kernel under QEMU, real drivers, the built coremotion inside.
        // Skipped without QEMU or the kernel (scripts/vm/fetch-kernel); .ci/run makes that a failure.
        .testTarget(
            name: "LinuxKernelTests",
            dependencies: ["coremotion", "MotionTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoreMotionCLITests",
            dependencies: ["CoreMotionCLI", "coremotion", "MotionBenchmarks", "MotionRecorderStore", "MotionRecordingFormats", "MotionSourcesLinux", "OpenCoreMotion", "MotionSources",
                           "MotionTestSupport"],
            swiftSettings: swiftSettings
        ),
    ]
)
