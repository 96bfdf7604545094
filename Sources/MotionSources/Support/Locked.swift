#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`.
///
/// OpenCoreMotion uses this rather than `Synchronization.Mutex` because on Linux that type waits on
/// raw futexes, which ThreadSanitizer cannot see: every access it guards would be reported as a race,
/// hiding real ones. A pthread mutex is understood by ThreadSanitizer and costs about the same
/// uncontended (one atomic operation to lock, one to unlock).
///
/// ## Threading
/// ``withLock(_:)`` may be called from any thread. It is not reentrant: calling it again from inside
/// its own body deadlocks.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    /// Creates a lock guarding `value`.
    public init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body(&value_)
    }

    @usableFromInline func lock() { pthread_mutex_lock(mutex) }
    @usableFromInline func unlock() { pthread_mutex_unlock(mutex) }
    @usableFromInline var value_: Value {
        _read { yield value }
        _modify { yield &value }
    }
}
