import Dispatch
import Foundation

extension OperationQueue {
    /// A queue that runs one operation at a time, in the order they were added: the delivery queue of
    /// handlers that keep state between samples (``SerialOperationQueue``).
    /// - Parameter name: the queue's name, shown in debuggers; `nil` leaves Foundation's default.
    /// - Returns: a new queue with `maxConcurrentOperationCount` 1 on a dispatch queue of its own.
    package static func serial(name: String? = nil) -> OperationQueue {
        SerialOperationQueue(name: name)
    }
}

/// An `OperationQueue` that runs one operation at a time on a serial dispatch queue of its own.
///
/// On Linux, swift-corelibs-foundation runs a plain `OperationQueue`'s operations on a concurrent
/// dispatch queue, that is on libdispatch's global pool, which has one thread per CPU. Every thread
/// of that pool may be busy or blocked (Swift tasks run there too; a test or an app that blocks them,
/// on a machine with two cores, holds the whole pool), and libdispatch adds a thread only when its
/// once-a-second check finds the pool's threads not running: measured here, a serial plain queue's
/// operation waited 6 s behind eight blocked pool jobs; this queue's ran within 2 ms. A serial
/// dispatch queue with no target runs on libdispatch's overcommit pool, which starts a thread when
/// none is free. The queue's own operations (pedometer, activity, recorder) therefore never wait
/// for the app's work.
package final class SerialOperationQueue: OperationQueue, @unchecked Sendable {
    // Sendable: OperationQueue is thread-safe; `backing` is a constant dispatch queue.
    /// Held here: `underlyingQueue` does not retain its queue.
    private let backing: DispatchQueue

    /// A serial queue, named `name` (and its dispatch queue labelled so) when given.
    package init(name: String?) {
        backing = DispatchQueue(label: name ?? "OpenCoreMotion.serial")
        super.init()
        maxConcurrentOperationCount = 1
        underlyingQueue = backing
        if let name { self.name = name }
    }
}
