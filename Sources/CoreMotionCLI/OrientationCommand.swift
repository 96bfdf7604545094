import ArgumentParser
import Foundation
import MotionSources
import MotionFusion
import OpenCoreMotion

/// `coremotion orientation`: the device orientation as `UIDevice` reports it.
package struct OrientationCommand: AsyncParsableCommand {
    /// Name, abstract and help text.
    package static let configuration = CommandConfiguration(
        commandName: "orientation",
        abstract: "Print the device orientation (portrait, landscapeLeft, faceUp, …) and each change.",
        discussion: """
            Reads the accelerometer at 10 Hz and decides as UIDevice does, with the same 35° hysteresis \
            as iio-sensor-proxy. With --once, prints the current orientation and exits (status 1 if no \
            decisive reading came within --timeout seconds).
            """
    )

    @OptionGroup var sourceOptions: SourceOptions

    @Flag(help: "Print the current orientation and exit.")
    var once = false

    @Option(parsing: .unconditional, help: "With --once, seconds to wait for a decisive reading.", transform: OptionValue.seconds(allowZero: true))
    var timeout: Double = 5

    @Option(parsing: .unconditional, help: ArgumentHelp("Exit after printing this many changes.", valueName: "N"), transform: OptionValue.count())
    var count: Int?

    /// Creates the command with default options (ArgumentParser fills them in).
    package init() {}

    /// Runs the command.
    package func run() async throws {
        let src = try sourceOptions.resolve()
        let manager = CMMotionManager(source: src)
        guard manager.isAccelerometerAvailable else {
            throw CLIError("\(src.info.identifier) has no accelerometer")
        }
        let once = self.once
        let limit = count
        let consumer = Task { () throws -> UIDeviceOrientation? in
            var estimator = DeviceOrientationEstimator()
            var last = UIDeviceOrientation.unknown
            var printed = 0
            for try await d in manager.accelerometerUpdates(interval: 0.1) {
                let o = estimator.update(Vector3(d.acceleration.x, d.acceleration.y, d.acceleration.z))
                if once {
                    if o != .unknown { return o }
                    continue
                }
                if o != last {
                    FileHandle.standardOutput.write(Data((String(format: "%.3f ", d.timestamp) + o.description + "\n").utf8))
                    last = o
                    printed += 1
                    if let limit, printed >= limit { return o }
                }
            }
            return nil
        }
        // --once gives up after the timeout, even if no sample ever arrives.
        let wait = UInt64(timeout * 1e9)  // safe: --timeout is validated
        let timer = Task {
            guard once else { return }
            try? await Task.sleep(nanoseconds: wait)
            consumer.cancel()
        }
        do {
            let result = try await consumer.value
            timer.cancel()
            if once {
                print((result ?? .unknown).description)
                if result == nil { throw ExitCode(1) }
            }
        } catch let e as ExitCode {
            throw e
        } catch {
            throw CLIError(String(describing: error))
        }
    }
}
