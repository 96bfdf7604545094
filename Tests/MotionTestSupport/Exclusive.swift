import Foundation
/// At most `width` tasks at once in `run`; the others wait, first come, first served, holding no
/// thread.
public actor Semaphore {
    private let width: Int
    private var running = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// A semaphore letting `width` (at least 1) bodies run at once.
    public init(width: Int) { self.width = max(1, width) }

    private func acquire() async {
        if running < width { running += 1; return }
        await withCheckedContinuation { waiters.append($0) }
    }

    private func release() {
        if waiters.isEmpty { running -= 1 } else { waiters.removeFirst().resume() }
    }

    /// Runs `body` once fewer than `width` others run.
    public nonisolated func run<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        await acquire()
        do {
            let value = try await body()
            await release()
            return value
        } catch {
            await release()
            throw error
        }
    }
}

/// Work the test process runs one at a time: booting a VM, driving a browser, a long soak.
///
/// Each of these keeps about one core busy for a minute or more, and several measure rates. On the
/// two-core CI machine two of them side by side starve each other and every other test. All test
/// targets link into one test process, so this one gate covers them all; the light tests run beside
/// whichever heavy one holds it. Waiting here does not hold a thread.
public enum Exclusive {
    /// The one gate of the test process.
    public static let gate = Semaphore(width: 1)

    /// Runs `body` when no other heavy work runs; first come, first served.
    ///
    /// A body that starts a process starts it at once (`ChildProcess.run(…, limited: false)`): queued
    /// for one of `ChildProcess.slots` behind the light tests' processes, it would hold the gate while
    /// it waits, and every other heavy run with it (a soak measured 668 s from gate to end for 120 s).
    ///
    /// Prints one line to standard error when `body` ends: `label`, how long it waited for the gate
    /// and how long it held it. The gate's holders run one after another, so their sum bounds the
    /// test run's length; these lines show where that time goes (in CI's log too).
    public static func run<T: Sendable>(_ label: String, _ body: () async throws -> T) async rethrows -> T {
        let asked = ContinuousClock.now
        var started = asked
        defer {
            let ended = ContinuousClock.now
            let line = "exclusive: \(label): waited \(seconds(started - asked)) s, held \(seconds(ended - started)) s\n"
            FileHandle.standardError.write(Data(line.utf8))
        }
        return try await gate.run {
            started = ContinuousClock.now
            return try await body()
        }
    }

    private static func seconds(_ d: Duration) -> String {
        let c = d.components
        return String(format: "%.1f", Double(c.seconds) + Double(c.attoseconds) / 1e18)
    }
}
