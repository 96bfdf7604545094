import Foundation

/// Checks `condition` now and then every `interval` seconds (sleeping, not blocking, in between) until
/// it holds or `seconds` (default 60) pass.
///
/// For conditions nothing signals (a count behind a lock filled by a handler the test does not own);
/// where the test owns what changes the state, ``Changes`` wakes on the event itself. The give-up
/// deadline only bounds a failure: a wait that succeeds returns within one `interval` of the condition
/// holding. Unlike a `usleep` loop, the waiting task holds no thread: on Linux Swift tasks share
/// libdispatch's pool of one thread per CPU with every `OperationQueue` delivery and
/// `DispatchQueue.global()` job, and a test blocking one of those threads stalls them all.
///
/// - Returns: whether `condition` held; on giving up, its value at that moment.
@discardableResult
public func eventually(giveUpAfter seconds: Double = 60, every interval: Double = 0.02,
                       _ condition: () -> Bool) async -> Bool {
    let end = Date().addingTimeInterval(seconds)
    // safe: clamped to 1 ms … 10 s before the conversion.
    let step = UInt64(min(max(interval.isFinite ? interval : 0.02, 0.001), 10) * 1e9)
    while !condition() {
        if Date() >= end { return condition() }
        try? await Task.sleep(nanoseconds: step)
    }
    return true
}

/// Sleeps `seconds` without holding a thread: the async counterpart of `usleep` for a test that
/// measures what happens (or does not) over a span of time.
public func pauseFor(_ seconds: Double) async {
    // safe: clamped to 0 … 1 day before the conversion.
    try? await Task.sleep(nanoseconds: UInt64(min(max(seconds.isFinite ? seconds : 0, 0), 86_400) * 1e9))
}

/// The end of a `Process` as something a task can await, without `waitUntilExit`.
///
/// Polls `isRunning` with `Task.sleep`; past `giveUpAfter` seconds (default 120) the process gets
/// SIGTERM, then SIGKILL 5 s later if it is still running.
/// - Returns: its termination status.
@discardableResult
public func exited(_ process: Process, giveUpAfter seconds: Double = 120) async -> Int32 {
    let end = Date().addingTimeInterval(seconds)
    while process.isRunning, Date() < end { try? await Task.sleep(nanoseconds: 10_000_000) }
    if process.isRunning {
        process.terminate()
        let kill = Date().addingTimeInterval(5)
        while process.isRunning, Date() < kill { try? await Task.sleep(nanoseconds: 10_000_000) }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        while process.isRunning { try? await Task.sleep(nanoseconds: 10_000_000) }
    }
    return process.terminationStatus
}
