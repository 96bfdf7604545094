import Foundation
import Logging
import MotionSources

/// Handler for accelerometer updates: a sample, or an error in ``CMErrorDomain``.
public typealias CMAccelerometerHandler = (CMAccelerometerData?, (any Error)?) -> Void
/// Handler for gyroscope updates: a sample, or an error in ``CMErrorDomain``.
public typealias CMGyroHandler = (CMGyroData?, (any Error)?) -> Void
/// Handler for magnetometer updates: a sample, or an error in ``CMErrorDomain``.
public typealias CMMagnetometerHandler = (CMMagnetometerData?, (any Error)?) -> Void
/// Handler for device-motion updates: a sample, or an error in ``CMErrorDomain``.
public typealias CMDeviceMotionHandler = (CMDeviceMotion?, (any Error)?) -> Void

/// The entry point to motion data, as in Core Motion: accelerometer, gyroscope, magnetometer and
/// fused device motion, pulled from a property or pushed to an `OperationQueue`.
///
/// `CMMotionManager()` uses the source named by the environment variable `COREMOTION_SOURCE`
/// (`sim`, `sim:SCENARIO`, `replay:PATH`, …; see ``CMMotionManager/source(named:)``), otherwise the
/// first motion hardware found, otherwise none: then every `is…Available` is `false`, as on the iOS
/// Simulator. ``init(source:)`` takes a source explicitly. Managers built on the same source object
/// share one stream from it.
///
/// ## Delivery
/// - **Pull**: after `start…Updates()`, the `…Data` property is `nil` until the first sample, then
///   holds the latest one.
/// - **Push**: `start…Updates(to:withHandler:)` calls the handler on the queue once per sample, in
///   order, one call at a time, none dropped however slow the handler (samples wait in memory; a source
///   in virtual time, which no clock paces, waits instead once 4096 samples wait). Once
///   `stop…Updates()` returns, no further handler call for that sensor begins, apart from at most one
///   that was already being started on the queue at that instant (stopping does not wait for your
///   handler, so it cannot deadlock with it); a call already running finishes. Other operations on
///   the queue are left alone; Apple's implementation cancels the whole queue, this one does not.
/// - **Async** (beyond Apple): ``accelerometerUpdates(interval:maximumLatency:)`` and its siblings.
///
/// Starting a sensor that is not available does nothing and leaves `is…Active` `false`. Calling
/// `start…` again while active replaces the previous handler. When the source fails (a device is
/// unplugged, a recording is malformed) the push handler receives one `NSError` in
/// ``CMErrorDomain``, updates stop and `is…Active` becomes `false`; samples delivered before stay
/// delivered.
///
/// ## Update intervals
/// Intervals are in seconds and are clamped, when set, to what the source supports, and read back
/// clamped. Zero, negative and NaN mean "as fast as possible" (the smallest interval);
/// `+infinity` means the largest. Without a source, the range is 0.01…1 s. Several consumers at
/// different intervals share one stream, thinned by timestamp: never interpolated, never duplicated.
/// Changing an interval while updates run takes effect at once.
///
/// ## Threading
/// Every member may be called from any thread.
open class CMMotionManager: NSObject {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its stored state is immutable or behind a `Locked`, so sharing it between threads is safe.
    enum Slot: Int, CaseIterable {
        case accelerometer, gyro, magnetometer, deviceMotion
    }

    private struct SlotState {
        var interval: Double
        var consumer: Int?
        var generation = 0
        var cancel: (@Sendable () -> Void)?
        var latest: CMLogItem?
        /// The generation whose source failed, possibly before `start` finished registering it.
        var failedGeneration: Int?
    }

    private struct State {
        var slots: [SlotState]
        var frame: CMAttitudeReferenceFrame = .xArbitraryZVertical
        var showsDeviceMovementDisplay = false
        var location: Location?
    }

    /// The hub of the source, or `nil` when there is no source at all.
    let hub: SourceHub?
    private let state: Locked<State>

    /// The default interval in seconds before one is set: 0.01 (100 Hz), clamped to the source.
    public static let defaultUpdateInterval: TimeInterval = 0.01

    /// Creates a manager on the process's default source (see the type's discussion).
    ///
    /// This is the designated initializer, as on Apple platforms: a subclass (a test's mock) calls
    /// `super.init()`.
    public override init() {
        (hub, state) = Self.makeState(source: SourceSelection.defaultSource)
        super.init()
    }

    /// Creates a manager on `source` (beyond Apple). Managers on the same source object share it.
    /// Designated, so a subclass that declares no initializer inherits it.
    public init(source: any SensorSource) {
        (hub, state) = Self.makeState(source: source)
        super.init()
    }

    private static func makeState(source: (any SensorSource)?) -> (SourceHub?, Locked<State>) {
        let info = source?.info
        let slots = Slot.allCases.map { slot in
            SlotState(interval: Self.clamp(Self.defaultUpdateInterval, slot: slot, info: info))
        }
        return (source.map(SourceHub.hub(for:)), Locked(State(slots: slots)))
    }

    deinit {
        for slot in Slot.allCases { stop(slot) }
    }

    /// The source this manager reads (beyond Apple); `nil` when there is none.
    public var source: (any SensorSource)? { hub?.source }

    // MARK: Intervals

    static func capability(_ slot: Slot, info: SourceInfo?) -> SensorCapability {
        let sensor: SensorKind = switch slot {
        case .accelerometer: .accelerometer
        case .gyro, .deviceMotion: .gyro
        case .magnetometer: .magnetometer
        }
        return info?.sensors[sensor] ?? SensorCapability(minimumRate: 1, maximumRate: 100)
    }

    /// Clamps an interval in seconds as documented on the type.
    static func clamp(_ interval: Double, slot: Slot, info: SourceInfo?) -> Double {
        let cap = capability(slot, info: info)
        if interval == .infinity { return 1 / cap.minimumRate }
        guard interval.isFinite, interval > 0 else { return 1 / cap.maximumRate }
        return 1 / cap.clamp(rate: 1 / interval)
    }

    func interval(_ slot: Slot) -> Double {
        state.withLock { $0.slots[slot.rawValue].interval }
    }

    func setInterval(_ value: Double, _ slot: Slot) {
        let clamped = Self.clamp(value, slot: slot, info: hub?.source.info)
        let consumer = state.withLock { s -> Int? in
            s.slots[slot.rawValue].interval = clamped
            return s.slots[slot.rawValue].consumer
        }
        if let consumer { hub?.setInterval(clamped, for: consumer) }
    }

    // MARK: Availability and state

    func isAvailable(_ slot: Slot) -> Bool {
        guard let sensors = hub?.source.info.sensors else { return false }
        switch slot {
        case .accelerometer: return sensors[.accelerometer] != nil
        case .gyro: return sensors[.gyro] != nil
        case .magnetometer: return sensors[.magnetometer] != nil
        case .deviceMotion: return sensors[.accelerometer] != nil && sensors[.gyro] != nil
        }
    }

    /// Why a consumer cannot start, with the one message each refusal has.
    struct ConsumerRefusal: Error {
        var error: NSError
        /// `false` for an absent sensor, which Apple's start methods ignore silently; async sequences
        /// throw every refusal.
        var reportedByStartMethods: Bool
    }

    /// The one check every consumer (pull, push, async sequence) passes before it is registered: the
    /// source carries the slot's sensors, a device-motion frame is a single available frame, and true
    /// north has a location. On success, the hub and the declination (degrees east; 0 unless true north).
    func check(_ slot: Slot, stream: MotionStream) -> Result<(SourceHub, Double), ConsumerRefusal> {
        guard let hub, isAvailable(slot) else {
            return .failure(ConsumerRefusal(error: .coreMotion(CMErrorNotAvailable, "no \(slot) on this source"),
                                            reportedByStartMethods: false))
        }
        guard case .deviceMotion(let frame) = stream else { return .success((hub, 0)) }
        guard availableReferenceFrames.contains(frame), Self.isSingleFrame(frame) else {
            return .failure(ConsumerRefusal(
                error: .coreMotion(CMErrorNotAvailable, "reference frame \(frame.rawValue) is not available from this source"),
                reportedByStartMethods: true))
        }
        guard frame == .xTrueNorthZVertical else { return .success((hub, 0)) }
        guard let location = state.withLock({ $0.location }), let declination = MagneticDeclination.degrees(at: location) else {
            return .failure(ConsumerRefusal(
                error: .coreMotion(CMErrorTrueNorthNotAvailable, "true north needs a location: set CMMotionManager.location (CLI: --location LAT,LON)"),
                reportedByStartMethods: true))
        }
        return .success((hub, declination))
    }

    func isActive(_ slot: Slot) -> Bool {
        state.withLock { $0.slots[slot.rawValue].consumer != nil }
    }

    func latest<T: CMLogItem>(_ slot: Slot, as: T.Type) -> T? {
        state.withLock { $0.slots[slot.rawValue].latest as? T }
    }

    // MARK: Start and stop

    /// Starts `slot`'s updates, replacing any running ones. `push` is called on the source's thread
    /// with each sample delivered and with the failure, if any; it must not block.
    /// - Returns: the error that kept updates from starting, if any.
    @discardableResult
    func start(
        _ slot: Slot,
        stream: MotionStream,
        push: QueuePush?,
        maximumLatency: TimeInterval = 0
    ) -> NSError? {
        let hub: SourceHub
        let declination: Double
        switch check(slot, stream: stream) {
        case .success(let passed):
            (hub, declination) = passed
        case .failure(let refusal):
            // Apple's start methods say nothing when the sensor is absent; the other refusals reach the handler.
            guard refusal.reportedByStartMethods else { return nil }
            push?.fail(refusal.error)
            return refusal.error
        }
        stop(slot)
        if hub.isPacedByConsumers {
            push?.limitBacklog(QueuePush.pacedBacklog)
        }
        let (interval, generation, showsMovement) = state.withLock { s in
            s.slots[slot.rawValue].generation += 1
            if case .deviceMotion(let frame) = stream { s.frame = frame }
            return (s.slots[slot.rawValue].interval, s.slots[slot.rawValue].generation, s.showsDeviceMovementDisplay)
        }
        var spec = ConsumerSpec(stream: stream, interval: interval, deliver: { _ in })
        spec.showsDeviceMovementDisplay = showsMovement
        spec.declination = declination
        spec.maximumLatency = maximumLatency
        // The manager is thread-safe by construction (its state is in a `Locked`).
        let weakSelf = UncheckedWeak(self)
        spec.deliver = { output in
            weakSelf.value?.receive(output, slot: slot, generation: generation, push: push)
        }
        do {
            let id = try hub.add(spec)
            let (stillCurrent, stopped) = state.withLock { s -> (Bool, Bool) in
                guard s.slots[slot.rawValue].generation == generation else { return (false, true) }
                guard s.slots[slot.rawValue].failedGeneration != generation else { return (false, false) }
                s.slots[slot.rawValue].consumer = id
                s.slots[slot.rawValue].cancel = push?.cancel
                return (true, false)
            }
            // Stopped or restarted meanwhile: that stop could not cancel this delivery yet. (After a
            // failure the delivery stays: the error waits in it for the handler.)
            if stopped { push?.cancel() }
            if !stillCurrent { hub.remove(id) }
            return nil
        } catch {
            Self.logger.error("cannot start \(slot): \(error.localizedDescription)")
            push?.fail(error)
            return error
        }
    }

    private func receive(_ output: HubOutput, slot: Slot, generation: Int, push: QueuePush?) {
        let item: CMLogItem?
        switch output {
        case .accelerometer(let d): item = d
        case .gyro(let d): item = d
        case .magnetometer(let d): item = d
        case .deviceMotion(let d): item = d
        case .notice(let error):
            push?.fail(error)
            return
        case .finished:
            return
        case .failure(let error):
            let current = state.withLock { s -> Bool in
                guard s.slots[slot.rawValue].generation == generation else { return false }
                s.slots[slot.rawValue].consumer = nil
                s.slots[slot.rawValue].cancel = nil
                s.slots[slot.rawValue].failedGeneration = generation
                return true
            }
            if current { push?.fail(error) }
            return
        }
        guard let item else { return }
        let current = state.withLock { s -> Bool in
            guard s.slots[slot.rawValue].generation == generation else { return false }
            s.slots[slot.rawValue].latest = item
            return true
        }
        if current { push?.deliver(item) }
    }

    /// Blocks until every source any manager of the process uses has taken every change of demand asked
    /// for so far: after the last `stop…Updates()` of each, until it is stopped and what fusion learned is
    /// saved. For a process about to exit (the `coremotion` tool calls it once a command has returned):
    /// without it, exiting while a source is being reconfigured can leave a device half set up (an I2C
    /// chip between its power-up commands). Sources still running are left running. Do not call it from
    /// a handler.
    package static func waitUntilEverySourceSettles() {
        SourceHub.settleAll()
    }

    func stop(_ slot: Slot) {
        let (consumer, cancel) = state.withLock { s -> (Int?, (@Sendable () -> Void)?) in
            s.slots[slot.rawValue].generation += 1
            defer {
                s.slots[slot.rawValue].consumer = nil
                s.slots[slot.rawValue].cancel = nil
            }
            return (s.slots[slot.rawValue].consumer, s.slots[slot.rawValue].cancel)
        }
        cancel?()
        if let consumer { hub?.remove(consumer) }
    }

    // MARK: Accelerometer

    /// Seconds between accelerometer updates, clamped to the source's range (see the type's discussion).
    /// Default ``CMMotionManager/defaultUpdateInterval``.
    open var accelerometerUpdateInterval: TimeInterval {
        get { interval(.accelerometer) }
        set { setInterval(newValue, .accelerometer) }
    }

    /// Whether the source has an accelerometer.
    open var isAccelerometerAvailable: Bool { isAvailable(.accelerometer) }

    /// Whether accelerometer updates are running: `true` after a successful start, `false` after a stop or
    /// a source failure.
    open var isAccelerometerActive: Bool { isActive(.accelerometer) }

    /// The latest accelerometer sample: `nil` until the first sample after a start, then the newest one.
    open var accelerometerData: CMAccelerometerData? { latest(.accelerometer, as: CMAccelerometerData.self) }

    /// Starts accelerometer updates to be read from ``accelerometerData``. No effect when unavailable.
    open func startAccelerometerUpdates() {
        start(.accelerometer, stream: .accelerometer, push: nil)
    }

    /// Starts accelerometer updates pushed to `handler` on `queue`: one handler call per sample, in order,
    /// none dropped. No effect when unavailable. A source failure reaches the handler once as an
    /// error in ``CMErrorDomain`` and stops updates.
    open func startAccelerometerUpdates(to queue: OperationQueue, withHandler handler: @escaping CMAccelerometerHandler) {
        start(.accelerometer, stream: .accelerometer, push: QueuePush(queue: queue, handler: handler))
    }

    /// Stops accelerometer updates. Once it returns, no further handler call for the accelerometer begins, apart from at most one already being started on the queue (see the type's discussion).
    open func stopAccelerometerUpdates() {
        stop(.accelerometer)
    }

    // MARK: Gyro

    /// Seconds between gyroscope updates, clamped to the source's range (see the type's discussion).
    /// Default ``CMMotionManager/defaultUpdateInterval``.
    open var gyroUpdateInterval: TimeInterval {
        get { interval(.gyro) }
        set { setInterval(newValue, .gyro) }
    }

    /// Whether the source has a gyroscope.
    open var isGyroAvailable: Bool { isAvailable(.gyro) }

    /// Whether gyroscope updates are running: `true` after a successful start, `false` after a stop or
    /// a source failure.
    open var isGyroActive: Bool { isActive(.gyro) }

    /// The latest gyroscope sample: `nil` until the first sample after a start, then the newest one.
    open var gyroData: CMGyroData? { latest(.gyro, as: CMGyroData.self) }

    /// Starts gyroscope updates to be read from ``gyroData``. No effect when unavailable.
    open func startGyroUpdates() {
        start(.gyro, stream: .gyro, push: nil)
    }

    /// Starts gyroscope updates pushed to `handler` on `queue`: one handler call per sample, in order,
    /// none dropped. No effect when unavailable. A source failure reaches the handler once as an
    /// error in ``CMErrorDomain`` and stops updates.
    open func startGyroUpdates(to queue: OperationQueue, withHandler handler: @escaping CMGyroHandler) {
        start(.gyro, stream: .gyro, push: QueuePush(queue: queue, handler: handler))
    }

    /// Stops gyroscope updates. Once it returns, no further handler call for the gyroscope begins, apart from at most one already being started on the queue (see the type's discussion).
    open func stopGyroUpdates() {
        stop(.gyro)
    }

    // MARK: Magnetometer

    /// Seconds between magnetometer updates, clamped to the source's range (see the type's discussion).
    /// Default ``CMMotionManager/defaultUpdateInterval``.
    open var magnetometerUpdateInterval: TimeInterval {
        get { interval(.magnetometer) }
        set { setInterval(newValue, .magnetometer) }
    }

    /// Whether the source has a magnetometer.
    open var isMagnetometerAvailable: Bool { isAvailable(.magnetometer) }

    /// Whether magnetometer updates are running: `true` after a successful start, `false` after a stop or
    /// a source failure.
    open var isMagnetometerActive: Bool { isActive(.magnetometer) }

    /// The latest magnetometer sample: `nil` until the first sample after a start, then the newest one.
    open var magnetometerData: CMMagnetometerData? { latest(.magnetometer, as: CMMagnetometerData.self) }

    /// Starts magnetometer updates to be read from ``magnetometerData``. No effect when unavailable.
    open func startMagnetometerUpdates() {
        start(.magnetometer, stream: .magnetometer, push: nil)
    }

    /// Starts magnetometer updates pushed to `handler` on `queue`: one handler call per sample, in order,
    /// none dropped. No effect when unavailable. A source failure reaches the handler once as an
    /// error in ``CMErrorDomain`` and stops updates.
    open func startMagnetometerUpdates(to queue: OperationQueue, withHandler handler: @escaping CMMagnetometerHandler) {
        start(.magnetometer, stream: .magnetometer, push: QueuePush(queue: queue, handler: handler))
    }

    /// Stops magnetometer updates. Once it returns, no further handler call for the magnetometer begins, apart from at most one already being started on the queue (see the type's discussion).
    open func stopMagnetometerUpdates() {
        stop(.magnetometer)
    }

    // MARK: DeviceMotion

    /// Seconds between device-motion updates, clamped to the gyroscope's range (see the type's
    /// discussion). Default ``CMMotionManager/defaultUpdateInterval``.
    open var deviceMotionUpdateInterval: TimeInterval {
        get { interval(.deviceMotion) }
        set { setInterval(newValue, .deviceMotion) }
    }

    /// Whether device motion can be computed: the source has an accelerometer and a gyroscope.
    open var isDeviceMotionAvailable: Bool { isAvailable(.deviceMotion) }

    /// Whether device-motion updates are running.
    open var isDeviceMotionActive: Bool { isActive(.deviceMotion) }

    /// The latest device motion: `nil` until the first estimate after a start, then the newest one.
    open var deviceMotion: CMDeviceMotion? { latest(.deviceMotion, as: CMDeviceMotion.self) }

    /// Starts device-motion updates in ``CMAttitudeReferenceFrame/xArbitraryZVertical``, to be read
    /// from ``deviceMotion``.
    open func startDeviceMotionUpdates() {
        start(.deviceMotion, stream: .deviceMotion(.xArbitraryZVertical), push: nil)
    }

    /// Starts device-motion updates in `referenceFrame`, to be read from ``deviceMotion``.
    /// A frame outside ``availableReferenceFrames`` does nothing.
    open func startDeviceMotionUpdates(using referenceFrame: CMAttitudeReferenceFrame) {
        start(.deviceMotion, stream: .deviceMotion(referenceFrame), push: nil)
    }

    /// Starts device-motion updates in ``CMAttitudeReferenceFrame/xArbitraryZVertical``, pushed to
    /// `handler` on `queue`.
    open func startDeviceMotionUpdates(to queue: OperationQueue, withHandler handler: @escaping CMDeviceMotionHandler) {
        start(.deviceMotion, stream: .deviceMotion(.xArbitraryZVertical), push: QueuePush(queue: queue, handler: handler))
    }

    /// Starts device-motion updates in `referenceFrame`, pushed to `handler` on `queue`: one
    /// operation per update, in order, none dropped.
    ///
    /// The handler receives an error in ``CMErrorDomain``:
    /// - `CMErrorTrueNorthNotAvailable` (102) for ``CMAttitudeReferenceFrame/xTrueNorthZVertical``
    ///   without a ``location``; updates do not start;
    /// - `CMErrorNotAvailable` (109) for a frame the source cannot provide; updates do not start;
    /// - `CMErrorDeviceRequiresMovement` (101) once, with ``showsDeviceMovementDisplay``, while the
    ///   magnetometer needs movement to calibrate; updates go on;
    /// - the source's failure, after which updates stop.
    open func startDeviceMotionUpdates(
        using referenceFrame: CMAttitudeReferenceFrame,
        to queue: OperationQueue,
        withHandler handler: @escaping CMDeviceMotionHandler
    ) {
        start(.deviceMotion, stream: .deviceMotion(referenceFrame), push: QueuePush(queue: queue, handler: handler))
    }

    /// Stops device-motion updates. Once it returns, no further handler call begins, apart from at most
    /// one already being started on the queue (see the type's discussion).
    open func stopDeviceMotionUpdates() {
        stop(.deviceMotion)
    }

    static func isSingleFrame(_ f: CMAttitudeReferenceFrame) -> Bool {
        f.rawValue != 0 && f.rawValue & (f.rawValue - 1) == 0
    }

    // MARK: Reference frames and settings

    /// The reference frame of the device-motion updates started last;
    /// ``CMAttitudeReferenceFrame/xArbitraryZVertical`` before any.
    open var attitudeReferenceFrame: CMAttitudeReferenceFrame { state.withLock { $0.frame } }

    /// The frames the default source supports: ``CMAttitudeReferenceFrame/xArbitraryZVertical``
    /// with an accelerometer and a gyroscope, and the three others when it has a magnetometer too.
    open class func availableAttitudeReferenceFrames() -> CMAttitudeReferenceFrame {
        frames(for: SourceSelection.defaultSource?.info)
    }

    /// The frames this manager's source supports (beyond Apple).
    open var availableReferenceFrames: CMAttitudeReferenceFrame { Self.frames(for: hub?.source.info) }

    static func frames(for info: SourceInfo?) -> CMAttitudeReferenceFrame {
        guard let sensors = info?.sensors, sensors[.accelerometer] != nil, sensors[.gyro] != nil else { return [] }
        var frames: CMAttitudeReferenceFrame = .xArbitraryZVertical
        if sensors[.magnetometer] != nil {
            frames.formUnion([.xArbitraryCorrectedZVertical, .xMagneticNorthZVertical, .xTrueNorthZVertical])
        }
        return frames
    }

    /// Whether device-motion handlers get `CMErrorDeviceRequiresMovement` (once) when the
    /// magnetometer needs the device moved to calibrate. Default `false`. Read when updates start.
    open var showsDeviceMovementDisplay: Bool {
        get { state.withLock { $0.showsDeviceMovementDisplay } }
        set { state.withLock { $0.showsDeviceMovementDisplay = newValue } }
    }

    /// A place on Earth, for the declination that ``CMAttitudeReferenceFrame/xTrueNorthZVertical`` needs.
    public struct Location: Sendable, Hashable {
        /// Degrees north, −90…90.
        public var latitude: Double
        /// Degrees east, −180…180.
        public var longitude: Double
        /// Metres above the WGS-84 ellipsoid; default 0.
        public var altitude: Double
        /// Creates a location.
        public init(latitude: Double, longitude: Double, altitude: Double = 0) {
            self.latitude = latitude
            self.longitude = longitude
            self.altitude = altitude
        }
    }

    /// Where the device is, for true north (beyond Apple, which asks Core Location). Default `nil`:
    /// starting ``CMAttitudeReferenceFrame/xTrueNorthZVertical`` updates then reports
    /// `CMErrorTrueNorthNotAvailable`. Read when updates start.
    public var location: Location? {
        get { state.withLock { $0.location } }
        set { state.withLock { $0.location = newValue } }
    }

    static let logger = Logger(label: "OpenCoreMotion.CMMotionManager")
}

/// A push consumer's two ends, type-erased over the sample type.
struct QueuePush: Sendable {
    var deliver: @Sendable (CMLogItem) -> Void
    var fail: @Sendable (NSError) -> Void
    var cancel: @Sendable () -> Void
    /// Bounds the samples waiting for the handler (``QueueDelivery/limitBacklog(to:)``).
    var limitBacklog: @Sendable (Int) -> Void

    init<T: CMLogItem>(queue: OperationQueue, handler: @escaping (T?, (any Error)?) -> Void) {
        let delivery = QueueDelivery<T>(queue: queue, handler: handler)
        deliver = { item in if let item = item as? T { delivery.enqueue(item) } }
        fail = { delivery.enqueue(error: $0) }
        cancel = { delivery.cancel() }
        limitBacklog = { delivery.limitBacklog(to: $0) }
    }

    /// The samples a handler may fall behind a source that no clock paces before the source waits for
    /// it (``ConsumerPacedSource``): 40 s at 100 Hz.
    static let pacedBacklog = 4096
}
