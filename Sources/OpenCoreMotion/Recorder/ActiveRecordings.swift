#if Recorder
import Foundation
import MotionRecorderStore
import MotionSources

/// The process's running recordings, one per database file and sensor, and its open stores.
///
/// A recording holds a ``CMMotionManager`` on the source (so it shares the source with every other
/// manager) and lives here, not in the ``CMSensorRecorder`` that started it: it goes on after that
/// object is released, until its duration is over.
enum ActiveRecordings {
    private static let stores = Locked<[String: RecordingStore]>([:])
    private static let running = Locked<[Key: Running]>([:])
    /// The running pressure recordings, by database path (the barometer is read through a source of its
    /// own, not a manager).
    private static let pressureRunning = Locked<[String: PressureRun]>([:])

    /// A running recording's database file and sensor.
    struct Key: Hashable {
        var path: String
        var sensor: RecordedSensor
    }

    /// The store of `path`, opened once per process.
    static func store(at path: String) throws(RecorderError) -> RecordingStore {
        if let open = stores.withLock({ $0[path] }) { return open }
        let store = try RecordingStore(location: .file(path))
        return stores.withLock { s in
            if let other = s[path] { return other }
            s[path] = store
            return store
        }
    }

    static func isRecording(databasePath path: String, sensor: RecordedSensor = .accelerometer) -> Bool {
        if sensor == .pressure { return pressureRunning.withLock { $0[path] != nil } }
        return running.withLock { $0[Key(path: path, sensor: sensor)] != nil }
    }

    /// The latest sample time the running recording of `path` and `sensor` has seen.
    static func lastTimestamp(databasePath path: String, sensor: RecordedSensor = .accelerometer) -> Double? {
        running.withLock { $0[Key(path: path, sensor: sensor)] }?.lastTimestamp
    }

    /// Ends every running recording and writes what it has buffered (up to half a second of samples
    /// per recording). Runs at process exit, registered when the first recording starts, so that a
    /// program that exits while recording keeps every sample it took.
    ///
    /// - Parameter path: only the recordings of this database (for tests); `nil`: all of them.
    static func finishAll(databasePath path: String? = nil) {
        for run in running.withLock({ r in r.filter { path == nil || $0.key.path == path }.map(\.value) }) {
            do {
                try run.recording.finish()
            } catch {
                CMSensorRecorder.logger.error("CMSensorRecorder: \(String(describing: error))")
            }
        }
        for run in pressureRunning.withLock({ r in r.filter { path == nil || $0.key == path }.map(\.value) }) {
            run.stop()
            do {
                try run.recording.finish()
            } catch {
                CMSensorRecorder.logger.error("CMSensorRecorder: \(String(describing: error))")
            }
        }
    }

    private static let finishAtExit: Void = {
        atexit { ActiveRecordings.finishAll() }
    }()

    /// Extends the running recording of `sensor` into `databasePath`, or starts one.
    static func record(
        source: any SensorSource, databasePath path: String, duration: TimeInterval, sensor: RecordedSensor = .accelerometer
    ) throws(RecorderError) {
        guard sensor.isVector else {
            throw RecorderError(.invalidRequest, "pressure is recorded with recordPressure(barometer:databasePath:duration:)", path: path)
        }
        let key = Key(path: path, sensor: sensor)
        let store = try store(at: path)
        _ = finishAtExit
        // One request at a time, so that two concurrent calls extend one recording rather than start two.
        try starting.withLock { (_: inout Void) throws(RecorderError) in
            if let current = running.withLock({ $0[key] }),
               try current.recording.extend(by: duration, after: current.lastTimestamp) {
                return
            }
            let recording = try AccelerometerRecording(
                store: store, source: source.info.identifier, duration: duration, sensor: sensor
            )
            let run = Running(recording: recording, source: source)
            running.withLock { $0[key] = run }
            run.start { running.withLock { if $0[key] === run { $0[key] = nil } } }
        }
    }

    private static let starting = Locked<Void>(())

    /// Extends the running pressure recording into `databasePath`, or starts one reading `barometer`.
    static func recordPressure(
        barometer: any BarometerSource, databasePath path: String, duration: TimeInterval
    ) throws(RecorderError) {
        let store = try store(at: path)
        _ = finishAtExit
        try starting.withLock { (_: inout Void) throws(RecorderError) in
            if let current = pressureRunning.withLock({ $0[path] }),
               try current.recording.extend(by: duration, after: current.lastTimestamp) {
                return
            }
            let recording = try PressureRecording(store: store, source: barometer.identifier, duration: duration)
            let run = PressureRun(recording: recording, barometer: barometer)
            pressureRunning.withLock { $0[path] = run }
            run.start { pressureRunning.withLock { if $0[path] === run { $0[path] = nil } } }
        }
    }

    /// One pressure recording: the barometer run as a source (``PolledBarometerSource``) at
    /// ``PressureRecording/rate`` (1 Hz) into the recording, as fast as the recording takes the readings
    /// when the barometer is on a virtual clock.
    final class PressureRun: Sendable {
        let recording: PressureRecording
        let barometer: any BarometerSource
        private let source: PolledBarometerSource
        private let state = Locked<(last: Double?, ended: Bool)>((nil, false))

        init(recording: PressureRecording, barometer: any BarometerSource) {
            self.recording = recording
            self.barometer = barometer
            source = PolledBarometerSource(barometer: barometer)
        }

        var lastTimestamp: Double? { state.withLock { $0.last } }

        func start(onEnd: @escaping @Sendable () -> Void) {
            do {
                try source.apply(SensorDemand(rates: [.pressure: PressureRecording.rate])) { [self] event in
                    receive(event, onEnd)
                }
            } catch {
                CMSensorRecorder.logger.error("CMSensorRecorder: \(error.description)")
                end(onEnd)
            }
        }

        /// Stops reading the barometer; waits for the reading thread unless called on it. For the end
        /// of the process (``ActiveRecordings/finishAll(databasePath:)``), which then finishes the recording.
        func stop() {
            _ = try? source.apply(.none) { _ in }
        }

        /// Passes one event of the barometer to the recording, on the source's thread.
        private func receive(_ event: SourceEvent, _ onEnd: @escaping @Sendable () -> Void) {
            switch event {
            case .sample(let sample):
                let t = sample.timestamp
                state.withLock { $0.last = t }
                do {
                    if try !recording.receive(timestamp: t, pressure: sample.value.x, temperature: barometer.readTemperature(at: t))
                        || recording.isFinished {
                        end(onEnd)
                    }
                } catch {
                    CMSensorRecorder.logger.error("CMSensorRecorder: \(String(describing: error))")
                    end(onEnd)
                }
            case .failed(let error):
                CMSensorRecorder.logger.error("CMSensorRecorder: the barometer failed: \(error.description)")
                end(onEnd)
            case .interrupted, .finished:
                break
            }
        }

        /// Stops the barometer, writes what is buffered and leaves the registry, once.
        private func end(_ onEnd: @escaping @Sendable () -> Void) {
            let first = state.withLock { s -> Bool in
                defer { s.ended = true }
                return !s.ended
            }
            guard first else { return }
            // From the reading thread the stop does not wait for it; no reading reaches the recording after.
            stop()
            do {
                try recording.finish()
            } catch {
                CMSensorRecorder.logger.error("CMSensorRecorder: \(String(describing: error))")
            }
            onEnd()
        }
    }

    /// One recording: a manager pushing accelerometer (or gyroscope) samples at 50 Hz to the recording.
    final class Running: @unchecked Sendable {
        // Sendable: every stored property is Sendable except `manager`, a `CMMotionManager`, which is
        // thread-safe by construction (its state is in a `Locked`) but not `Sendable`, as Apple's
        // (see Unchecked.swift).
        let recording: AccelerometerRecording
        let manager: CMMotionManager
        let queue: OperationQueue
        private let state = Locked<(last: Double?, ended: Bool)>((nil, false))

        init(recording: AccelerometerRecording, source: any SensorSource) {
            self.recording = recording
            manager = CMMotionManager(source: source)
            manager.accelerometerUpdateInterval = 1 / AccelerometerRecording.rate
            manager.gyroUpdateInterval = 1 / AccelerometerRecording.rate
            queue = .serial(name: "OpenCoreMotion.CMSensorRecorder")
        }

        var lastTimestamp: Double? { state.withLock { $0.last } }

        func start(onEnd: @escaping @Sendable () -> Void) {
            switch recording.sensor {
            case .accelerometer:
                manager.startAccelerometerUpdates(to: queue) { [self] data, error in
                    let a = data?.acceleration
                    receive(data?.timestamp, a.map { ($0.x, $0.y, $0.z) }, error, onEnd)
                }
            case .rotationRate:
                manager.startGyroUpdates(to: queue) { [self] data, error in
                    let r = data?.rotationRate
                    receive(data?.timestamp, r.map { ($0.x, $0.y, $0.z) }, error, onEnd)
                }
            case .pressure:
                // Not a manager's sensor: ``record(source:databasePath:duration:sensor:)`` refuses it.
                end(onEnd)
            }
        }

        /// Passes one delivery of the manager to the recording.
        private func receive(
            _ timestamp: Double?, _ value: (Double, Double, Double)?, _ error: (any Error)?, _ onEnd: @escaping @Sendable () -> Void
        ) {
            if let error {
                CMSensorRecorder.logger.error("CMSensorRecorder: the source failed: \(error.localizedDescription)")
                end(onEnd)
                return
            }
            guard let timestamp, let value else { return }
            state.withLock { $0.last = timestamp }
            do {
                if try !recording.receive(timestamp: timestamp, x: value.0, y: value.1, z: value.2) { end(onEnd) }
            } catch {
                CMSensorRecorder.logger.error("CMSensorRecorder: \(String(describing: error))")
                end(onEnd)
            }
        }

        /// Stops the manager, writes what is buffered and leaves the registry, once.
        private func end(_ onEnd: @escaping @Sendable () -> Void) {
            let first = state.withLock { s -> Bool in
                defer { s.ended = true }
                return !s.ended
            }
            guard first else { return }
            // A request arriving from now on cannot extend this recording (it is over) and starts a
            // new one, which replaces this entry; onEnd removes the entry only while it is still ours.
            // A serial queue of its own runs on libdispatch's overcommit pool: never behind the app's
            // work on the global pool (see SerialOperationQueue).
            DispatchQueue(label: "OpenCoreMotion.CMSensorRecorder.end").async { [self] in
                switch recording.sensor {
                case .accelerometer: manager.stopAccelerometerUpdates()
                case .rotationRate: manager.stopGyroUpdates()
                case .pressure: break
                }
                do {
                    try recording.finish()
                } catch {
                    CMSensorRecorder.logger.error("CMSensorRecorder: \(String(describing: error))")
                }
                onEnd()
            }
        }
    }
}
#endif
