import Foundation
import MotionFusion
import MotionSources
import OpenCoreMotion

/// A ``DashboardFeed`` over a `CMMotionManager`: the dashboard's controls become the manager's
/// `start…Updates(to:withHandler:)`, `stop…Updates()`, update intervals and reference frame.
///
/// On the same source it runs a `CMPedometer` (when the source has an accelerometer) for the
/// ``DashboardSensor/pedometer`` stream, and a `CMAltimeter` on the barometer given (if any) for
/// ``DashboardSensor/altitude``. Given a ``DashboardDevicePicker`` (the manager's source), it lists the
/// devices of a multi-device source and shows the one the page picks.
///
/// The feed takes over the manager's push handlers for the four sensors; don't start push updates
/// on the same manager elsewhere. To show a device that other code also reads, give the feed its own
/// manager on the same source with ``init(source:)``: managers on one source share its stream.
///
/// ## Threading
/// All members may be called from any thread. Handlers run on a private serial `OperationQueue`.
package final class MotionManagerFeed: DashboardFeed, @unchecked Sendable {
    // Sendable: every stored property is Sendable except the Core Motion managers, which, like Apple's,
    // are not `Sendable` but are callable from any thread (their state is behind a lock); the ones this
    // feed creates are held in a `Locked`.
    /// The manager the dashboard drives.
    package let manager: CMMotionManager
    /// What the dashboard shows in its header; built once from the manager's source.
    package let sourceDescription: DashboardSourceDescription

    private let queue: OperationQueue
    /// The sink, inside a struct: a lock whose value is itself a closure re-wraps it in
    /// reabstraction thunks on every `withLock`, so each call would get slower than the last.
    private struct Sink { var send: (@Sendable (DashboardFeedEvent) -> Void)? }
    private let sink = Locked(Sink())
    private let current = Locked<DashboardFeedConfiguration?>(nil)
    /// The device orientation of the manager's source, read through its own manager (at
    /// `UIDevice.orientationUpdateInterval`) so the dashboard's accelerometer stream is left alone.
    private let device: UIDevice?
    private let orientationWatch = Locked<Task<Void, Never>?>(nil)
    /// The barometer behind the altitude stream, if any.
    package let barometer: (any BarometerSource)?
    /// The device picker of a multi-device source, if any (it is also the manager's source).
    package let devicePicker: DashboardDevicePicker?
    /// The pedometer and altimeter while their streams run.
    private struct Extras {
        var pedometer: CMPedometer?
        var altimeter: CMAltimeter?
        var activity: CMMotionActivityManager?
    }
    private let extras = Locked(Extras())

    /// The Core Motion reference frames by the names used on the wire, in the order the page lists them.
    static let frameNames: [(CMAttitudeReferenceFrame, String)] = CMAttitudeReferenceFrame.named.map { ($0.frame, $0.name) }

    /// Creates a feed driving `manager`. True north is offered only when the manager has a `location`.
    ///
    /// - Parameters:
    ///   - manager: the manager the dashboard drives.
    ///   - barometer: a barometer for the altitude stream (for example `CMAltimeter().barometer`), or
    ///     `nil` (default) for none.
    ///   - devicePicker: the picker when `manager`'s source is a ``DashboardDevicePicker``, so the page
    ///     can choose the device; `nil` (default) otherwise.
    package init(manager: CMMotionManager, barometer: (any BarometerSource)? = nil, devicePicker: DashboardDevicePicker? = nil) {
        self.manager = manager
        self.barometer = barometer
        self.devicePicker = devicePicker
        device = manager.source.map { UIDevice(source: $0) }
        queue = .serial(name: "coremotion.dashboard.feed")
        let available = manager.availableReferenceFrames
        let frames = Self.frameNames
            .filter { available.contains($0.0) && ($0.0 != .xTrueNorthZVertical || manager.location != nil) }
            .map(\.1)
        if let info = manager.source?.info {
            var description = DashboardSourceDescription(
                info: info, deviceMotion: manager.isDeviceMotionAvailable, referenceFrames: frames)
            if info.sensors[.accelerometer] != nil {
                description.streams[.pedometer] = .init()
                description.streams[.activity] = .init()
            }
            if let barometer {
                description.streams[.altitude] = .init(minimumRate: 1, maximumRate: 1)
                description.details.append(("barometer", barometer.name))
            }
            sourceDescription = description
        } else {
            sourceDescription = DashboardSourceDescription(
                identifier: "none", name: "No motion source (set COREMOTION_SOURCE or pass --source)", streams: [:])
        }
    }

    /// Creates a feed on its own `CMMotionManager` over `source`, with the altitude stream from
    /// `barometer` when one is given.
    package convenience init(source: any SensorSource, barometer: (any BarometerSource)? = nil) {
        self.init(manager: CMMotionManager(source: source), barometer: barometer,
                  devicePicker: source as? DashboardDevicePicker)
    }

    deinit {
        guard let watch = orientationWatch.withLock({ $0 }) else { return }
        watch.cancel()
        device?.endGeneratingDeviceOrientationNotifications()
    }

    /// Shows a device orientation on the page (`"portrait"`, `"faceUp"`, …; `nil`: unknown). The feed
    /// already reports the orientation of its source as `UIDevice` decides it; this is for code that
    /// decides orientation another way.
    package func report(orientation: String?) {
        emit(.orientation(orientation))
    }

    /// Sets the sink that receives samples, errors and orientation changes, from the feed's queue.
    ///
    /// The first call also begins device-orientation tracking on the source (the accelerometer at
    /// `UIDevice.orientationUpdateInterval`, 10 Hz), whose changes reach the sink as
    /// ``DashboardFeedEvent/orientation(_:)`` until the feed is released.
    package func connect(_ sink: @escaping @Sendable (DashboardFeedEvent) -> Void) {
        self.sink.withLock { $0.send = sink }
        devicePicker?.onChange { [weak self] devices, selected in
            self?.emit(.devices(devices, selected: selected))
        }
        guard let device else { return }
        orientationWatch.withLock { watch in
            guard watch == nil else { return }
            let updates = device.orientationUpdates
            device.beginGeneratingDeviceOrientationNotifications()
            watch = Task { [weak self] in
                for await orientation in updates {
                    guard let self else { return }
                    emit(.orientation(orientation == .unknown ? nil : orientation.description))
                }
            }
        }
    }

    /// Starts and stops the manager's updates and sets its intervals to match `configuration`; device
    /// motion restarts when the reference frame changes. Called by the dashboard, one call at a time.
    package func apply(_ configuration: DashboardFeedConfiguration) {
        let old = current.withLock { c -> DashboardFeedConfiguration? in
            defer { c = configuration }
            return c
        }
        var wasRunning = old?.running ?? []
        let switchesDevice = devicePicker != nil && configuration.device != nil && configuration.device != old?.device
        for sensor in DashboardSensor.allCases where wasRunning.contains(sensor)
            && (!configuration.running.contains(sensor) || switchesDevice)
        {
            stop(sensor)
        }
        if switchesDevice, let device = configuration.device {
            // Every stream restarts on the new device: fusion and step counting begin afresh.
            devicePicker?.select(device)
            wasRunning = []
        }
        // The manager applies a new interval at once, even while updates run.
        let interval = configuration.interval
        manager.accelerometerUpdateInterval = interval
        manager.gyroUpdateInterval = interval
        manager.magnetometerUpdateInterval = interval
        manager.deviceMotionUpdateInterval = interval
        for sensor in DashboardSensor.allCases where configuration.running.contains(sensor) {
            let frameChanged = sensor == .deviceMotion && old?.referenceFrame != configuration.referenceFrame
            if !wasRunning.contains(sensor) || frameChanged {
                start(sensor, frame: configuration.referenceFrame)
            }
        }
    }

    private func emit(_ event: DashboardFeedEvent) {
        sink.withLock { $0.send }?(event)
    }

    private func failure(_ sensor: DashboardSensor, _ error: any Error) {
        emit(.error(sensor, (error as NSError).localizedDescription))
    }

    private func start(_ sensor: DashboardSensor, frame: String?) {
        switch sensor {
        case .accelerometer:
            manager.startAccelerometerUpdates(to: queue) { [weak self] data, error in
                guard let self else { return }
                if let data {
                    let a = data.acceleration
                    emit(.sample(DashboardSample(sensor: .accelerometer, timestamp: data.timestamp, vector: Vector3(a.x, a.y, a.z))))
                } else if let error { failure(.accelerometer, error) }
            }
        case .gyro:
            manager.startGyroUpdates(to: queue) { [weak self] data, error in
                guard let self else { return }
                if let data {
                    let r = data.rotationRate
                    emit(.sample(DashboardSample(sensor: .gyro, timestamp: data.timestamp, vector: Vector3(r.x, r.y, r.z))))
                } else if let error { failure(.gyro, error) }
            }
        case .magnetometer:
            manager.startMagnetometerUpdates(to: queue) { [weak self] data, error in
                guard let self else { return }
                if let data {
                    let m = data.magneticField
                    emit(.sample(DashboardSample(sensor: .magnetometer, timestamp: data.timestamp, vector: Vector3(m.x, m.y, m.z))))
                } else if let error { failure(.magnetometer, error) }
            }
        case .deviceMotion:
            let reference = Self.frameNames.first { $0.1 == frame }?.0 ?? .xArbitraryZVertical
            manager.startDeviceMotionUpdates(using: reference, to: queue) { [weak self] motion, error in
                guard let self else { return }
                if let motion {
                    emit(.sample(DashboardSample(timestamp: motion.timestamp, deviceMotion: Self.convert(motion))))
                } else if let error { failure(.deviceMotion, error) }
            }
        case .pedometer:
            guard let source = manager.source else { return }
            let pedometer = CMPedometer(source: source)
            extras.withLock { $0.pedometer = pedometer }
            let boot = MonotonicClock.unixTimeAtBoot()  // dates to seconds since boot
            pedometer.startUpdates(from: Date()) { [weak self] data, error in
                guard let self else { return }
                if let data {
                    let reading = DashboardPedometer(
                        steps: data.numberOfSteps.intValue, distance: data.distance?.doubleValue,
                        cadence: data.currentCadence?.doubleValue, pace: data.currentPace?.doubleValue)
                    emit(.sample(DashboardSample(timestamp: data.endDate.timeIntervalSince1970 - boot, pedometer: reading)))
                } else if let error { failure(.pedometer, error) }
            }
        case .activity:
            guard let source = manager.source else { return }
            let activity = CMMotionActivityManager(source: source)
            extras.withLock { $0.activity = activity }
            let boot = MonotonicClock.unixTimeAtBoot()  // dates to seconds since boot
            activity.startActivityUpdates(to: queue) { [weak self] update in
                guard let self, let update else { return }
                let reading = DashboardActivity(activity: update.kind.description, confidence: update.confidence.rawValue)
                emit(.sample(DashboardSample(timestamp: update.startDate.timeIntervalSince1970 - boot, activity: reading)))
            }
        case .altitude:
            guard let barometer else { return }
            let altimeter = CMAltimeter(barometer: barometer)
            extras.withLock { $0.altimeter = altimeter }
            altimeter.startRelativeAltitudeUpdates(to: queue) { [weak self] data, error in
                guard let self else { return }
                if let data {
                    let reading = DashboardAltitude(
                        relativeAltitude: data.relativeAltitude.doubleValue, pressure: data.pressure.doubleValue)
                    emit(.sample(DashboardSample(timestamp: data.timestamp, altitude: reading)))
                } else if let error { failure(.altitude, error) }
            }
        }
    }

    private func stop(_ sensor: DashboardSensor) {
        switch sensor {
        case .accelerometer: manager.stopAccelerometerUpdates()
        case .gyro: manager.stopGyroUpdates()
        case .magnetometer: manager.stopMagnetometerUpdates()
        case .deviceMotion: manager.stopDeviceMotionUpdates()
        case .pedometer:
            extras.withLock { e -> CMPedometer? in
                defer { e.pedometer = nil }
                return e.pedometer
            }?.stopUpdates()
        case .altitude:
            extras.withLock { e -> CMAltimeter? in
                defer { e.altimeter = nil }
                return e.altimeter
            }?.stopRelativeAltitudeUpdates()
        case .activity:
            extras.withLock { e -> CMMotionActivityManager? in
                defer { e.activity = nil }
                return e.activity
            }?.stopActivityUpdates()
        }
    }

    static func convert(_ m: CMDeviceMotion) -> DashboardDeviceMotion {
        let q = m.attitude.quaternion
        let g = m.gravity, u = m.userAcceleration, r = m.rotationRate, f = m.magneticField.field
        return DashboardDeviceMotion(
            roll: m.attitude.roll, pitch: m.attitude.pitch, yaw: m.attitude.yaw,
            quaternion: Quaternion(w: q.w, x: q.x, y: q.y, z: q.z),
            gravity: Vector3(g.x, g.y, g.z), userAcceleration: Vector3(u.x, u.y, u.z),
            rotationRate: Vector3(r.x, r.y, r.z), magneticField: Vector3(f.x, f.y, f.z),
            magneticFieldAccuracy: Int(m.magneticField.accuracy.rawValue), heading: m.heading)
    }
}

extension DashboardServer {
    /// Creates a dashboard driving `manager` through a ``MotionManagerFeed``; the feed takes over the
    /// manager's push handlers. See ``init(feed:host:port:frameInterval:outboxCapacity:clock:logger:)``.
    package convenience init(manager: CMMotionManager, host: String = "127.0.0.1", port: Int = 8080) {
        self.init(feed: MotionManagerFeed(manager: manager), host: host, port: port)
    }

    /// Creates a dashboard on its own `CMMotionManager` over `source`, leaving other managers on the
    /// same source untouched, with the altitude stream from `barometer` when one is given. See
    /// ``init(feed:host:port:frameInterval:outboxCapacity:clock:logger:)``.
    package convenience init(
        source: any SensorSource, barometer: (any BarometerSource)? = nil, host: String = "127.0.0.1", port: Int = 8080
    ) {
        self.init(feed: MotionManagerFeed(source: source, barometer: barometer), host: host, port: port)
    }
}
