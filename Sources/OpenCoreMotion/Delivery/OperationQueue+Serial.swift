import Foundation

extension OperationQueue {
    /// A queue that runs one operation at a time, in the order they were added: the delivery queue of
    /// handlers that keep state between samples.
    /// - Parameter name: the queue's name, shown in debuggers; `nil` leaves Foundation's default.
    /// - Returns: a new queue with `maxConcurrentOperationCount` 1.
    package static func serial(name: String? = nil) -> OperationQueue {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        if let name { queue.name = name }
        return queue
    }
}
