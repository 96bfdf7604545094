import MotionSources
import MotionFusion

/// Turns a motion node's event stream into samples: a pure state machine over `input_event`s.
///
/// - Only changed axes are sent, so the last value of every axis is kept; each `SYN_REPORT` closes
///   one IMU frame and yields one accelerometer sample (and one gyro sample when the node has one).
/// - Time comes from `MSC_TIMESTAMP`, a wrapping u32 count of µs, unwrapped into a running count
///   and anchored to the event time of the first frame (re-anchored if the two drift apart by more
///   than 100 ms, after a suspend say). Frames without `MSC_TIMESTAMP` use the event time. Time never
///   goes back: a frame that a re-anchor (or an event clock that steps back) would stamp at or before
///   the previous one is stamped 1 µs after it, so that it is not dropped downstream as out of order
///   (a device whose frames reach the kernel late, then in a burst, moved the anchor forward and then
///   back: one frame lost in an hour of a uinput node in a starved VM).
/// - `SYN_DROPPED`: events up to the next `SYN_REPORT` are discarded and the result asks for a
///   resync; the caller re-reads every axis (`EVIOCGABS`) and calls ``resync(_:)``.
package struct EvdevStream: Sendable {
    /// What one batch of events produced.
    package struct Output: Sendable {
        /// Samples in Core Motion units, in order.
        package var samples: [RawSample] = []
        /// `true` when events were dropped: re-read the axes and call ``EvdevStream/resync(_:)``.
        package var needsResync = false
    }

    let map: EvdevAxisMap
    let accelScale: [Double]   // 1 / resolution (g per unit), per axis
    let gyroScale: [Double]    // rad/s per unit, per axis
    let hasGyro: Bool
    private(set) var values: [UInt16: Int32]
    private var dropping = false
    private var frameHasTimestamp = false
    private var frameTimestampUs: UInt32 = 0
    private var lastTimestampUs: UInt32?
    private var elapsedUs: Int64 = 0
    private var anchor: Double?            // seconds: time of elapsedUs == 0
    private var lastFrameTime = -Double.infinity
    private var changed = false

    /// Creates a stream for a node.
    ///
    /// - Parameters:
    ///   - identity: the node's axes (with resolutions and current values).
    ///   - map: the axis map; default from the driver (``EvdevAxisMap/forNode(_:)``).
    package init(identity: EvdevIdentity, map: EvdevAxisMap? = nil) {
        self.map = map ?? EvdevAxisMap.forNode(identity)
        func res(_ c: UInt16) -> Double { Double(max(identity.axes[c]?.resolution ?? 1, 1)) }
        accelScale = [EvdevCode.ABS_X, EvdevCode.ABS_Y, EvdevCode.ABS_Z].map { 1 / res($0) }
        gyroScale = [EvdevCode.ABS_RX, EvdevCode.ABS_RY, EvdevCode.ABS_RZ].map { .pi / 180 / res($0) }
        hasGyro = identity.hasGyro
        values = identity.axes.mapValues(\.value)
    }

    /// Feeds events; returns the samples of the frames they complete.
    package mutating func feed(_ events: [InputEvent]) -> Output {
        var out = Output()
        for e in events {
            if dropping {
                if e.type == EvdevCode.EV_SYN && e.code == EvdevCode.SYN_REPORT {
                    dropping = false
                    frameHasTimestamp = false
                    out.needsResync = true
                }
                continue
            }
            switch e.type {
            case EvdevCode.EV_ABS:
                values[e.code] = e.value
                changed = true
            case EvdevCode.EV_MSC where e.code == EvdevCode.MSC_TIMESTAMP:
                frameHasTimestamp = true
                frameTimestampUs = UInt32(bitPattern: e.value)
            case EvdevCode.EV_SYN where e.code == EvdevCode.SYN_DROPPED:
                dropping = true
            case EvdevCode.EV_SYN where e.code == EvdevCode.SYN_REPORT:
                var t = frameTime(eventTime: e.time)
                if t <= lastFrameTime { t = lastFrameTime + 1e-6 }
                lastFrameTime = t
                if changed || frameHasTimestamp { out.samples += frame(at: t) }
                changed = false
                frameHasTimestamp = false
            default:
                break
            }
        }
        return out
    }

    /// Replaces every axis value after a `SYN_DROPPED` (values from `EVIOCGABS`).
    package mutating func resync(_ fresh: [UInt16: Int32]) {
        for (k, v) in fresh { values[k] = v }
    }

    private mutating func frameTime(eventTime: Double) -> Double {
        guard frameHasTimestamp else { return eventTime }
        if let last = lastTimestampUs {
            elapsedUs += Int64(frameTimestampUs &- last)   // wraps at 2^32 µs (71.6 min)
        }
        lastTimestampUs = frameTimestampUs
        if anchor == nil { anchor = eventTime - Double(elapsedUs) / 1e6 }
        var t = anchor! + Double(elapsedUs) / 1e6
        if abs(t - eventTime) > 0.1 {
            anchor = eventTime - Double(elapsedUs) / 1e6
            t = eventTime
        }
        return t
    }

    private func frame(at t: Double) -> [RawSample] {
        func v(_ c: UInt16) -> Double { Double(values[c] ?? 0) }
        let a = Vector3(v(EvdevCode.ABS_X) * accelScale[0], v(EvdevCode.ABS_Y) * accelScale[1], v(EvdevCode.ABS_Z) * accelScale[2])
        var out = [RawSample(sensor: .accelerometer, timestamp: t, value: map.acceleration(a))]
        if hasGyro {
            let g = Vector3(v(EvdevCode.ABS_RX) * gyroScale[0], v(EvdevCode.ABS_RY) * gyroScale[1], v(EvdevCode.ABS_RZ) * gyroScale[2])
            out.append(RawSample(sensor: .gyro, timestamp: t, value: map.rotationRate(g)))
        }
        return out
    }
}
