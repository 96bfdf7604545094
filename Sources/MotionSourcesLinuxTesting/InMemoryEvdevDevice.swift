#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources
import MotionSourcesLinux

/// A twin of an evdev node for tests: an identity (for instance parsed from an `evtest` dump) and
/// an ``InMemoryDeviceNode`` carrying encoded events.
package final class InMemoryEvdevDevice: EvdevDevice, EvdevOpener, Sendable {
    private struct State {
        var identity: EvdevIdentity
        var handle: (any LinuxDeviceHandle)?
    }
    private let state: Locked<State>
    /// Where the events come from: push ``InputEvent/encode(_:)`` bytes.
    package let node: InMemoryDeviceNode

    /// Creates a twin.
    package init(identity: EvdevIdentity) {
        state = Locked(State(identity: identity))
        let fs = InMemoryLinuxFileSystem()
        node = fs.addDevice(identity.path)
    }

    /// Sets the value `EVIOCGABS` reports for an axis (what the kernel holds after a drop).
    package func setAxisValue(_ code: UInt16, _ value: Int32) { state.withLock { $0.identity.axes[code]?.value = value } }

    package func open(_ path: String) throws(LinuxIOError) -> any EvdevDevice {
        let h = try node.open()
        state.withLock { $0.handle = h }
        return self
    }
    package func identity() throws(LinuxIOError) -> EvdevIdentity { state.withLock { $0.identity } }
    package func axisValues() throws(LinuxIOError) -> [UInt16: Int32] { state.withLock { $0.identity.axes.mapValues(\.value) } }
    package func readEvents(timeout: Double) throws(LinuxIOError) -> [InputEvent] {
        guard let h = state.withLock({ $0.handle }) else { throw LinuxIOError(code: EBADF, path: node.path, operation: "read") }
        return InputEvent.decode(try h.read(maxBytes: InputEvent.byteSize * 64, timeout: timeout))
    }
    package func close() { state.withLock { $0.handle }?.close() }
}
