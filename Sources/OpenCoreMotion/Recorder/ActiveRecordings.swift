#if Recorder
import Foundation
import MotionRecorderStore
import MotionSources

/// The process's running recordings, one per database file, and its open stores.
///
/// A recording holds a ``CMMotionManager`` on the source (so it shares the source with every other
/// manager) and lives here, not in the ``CMSensorRecorder`` that started it: it goes on after that
/// object is released, until its duration is over.
enum ActiveRecordings {
    private static let stores = Locked<[String: RecordingStore]>([:])
    private static let running = Locked<[String: Running]>([:])

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

    static func isRecording(databasePath path: String) -> Bool {
        running.withLock { $0[path] != nil }
    }

    /// The latest sample time the running recording of `path` has seen.
    static func lastTimestamp(databasePath path: String) -> Double? {
        running.withLock { $0[path] }?.lastTimestamp
    }

    /// Ends every running recording and writes what it has buffered (up to half a second of samples
    /// per recording). Runs at process exit, registered when the first recording starts, so that a
    /// program that exits while recording keeps every sample it took.
    ///
    /// - Parameter path: only the recording of this database (for tests); `nil`: all of them.
    static func finishAll(databasePath path: String? = nil) {
        for run in running.withLock({ r in path.map { r[$0].map { [$0] } ?? [] } ?? Array(r.values) }) {
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

    /// Extends the running recording of `databasePath`, or starts one.
    static func record(source: any SensorSource, databasePath path: String, duration: TimeInterval) throws(RecorderError) {
        let store = try store(at: path)
        _ = finishAtExit
        // One request at a time, so that two concurrent calls extend one recording rather than start two.
        try starting.withLock { (_: inout Void) throws(RecorderError) in
            if let current = running.withLock({ $0[path] }),
               try current.recording.extend(by: duration, after: current.lastTimestamp) {
                return
            }
            let recording = try AccelerometerRecording(store: store, source: source.info.identifier, duration: duration)
            let run = Running(recording: recording, source: source)
            running.withLock { $0[path] = run }
            run.start { running.withLock { if $0[path] === run { $0[path] = nil } } }
        }
    }

    private static let starting = Locked<Void>(())

    /// One recording: a manager pushing accelerometer samples at 50 Hz to the recording.
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
            queue = .serial(name: "OpenCoreMotion.CMSensorRecorder")
        }

        var lastTimestamp: Double? { state.withLock { $0.last } }

        func start(onEnd: @escaping @Sendable () -> Void) {
            manager.startAccelerometerUpdates(to: queue) { [self] data, error in
                if let error {
                    CMSensorRecorder.logger.error("CMSensorRecorder: the source failed: \(error.localizedDescription)")
                    end(onEnd)
                    return
                }
                guard let data else { return }
                state.withLock { $0.last = data.timestamp }
                let a = data.acceleration
                do {
                    if try !recording.receive(timestamp: data.timestamp, x: a.x, y: a.y, z: a.z) { end(onEnd) }
                } catch {
                    CMSensorRecorder.logger.error("CMSensorRecorder: \(String(describing: error))")
                    end(onEnd)
                }
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
            DispatchQueue.global().async { [self] in
                manager.stopAccelerometerUpdates()
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
