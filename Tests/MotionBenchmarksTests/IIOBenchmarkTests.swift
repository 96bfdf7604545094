import MotionTestSupport
import Testing
import MotionBenchmarks

@Suite struct IIOBenchmarkTests {
    /// One second of the benchmark (the full one is `coremotion bench iio`): the real source reads a
    /// FIFO written at 1 kHz and loses nothing. Latency is only printed here, as the test machine is shared.
    @Test func oneSecondAtOneKilohertzLosesNothing() async throws {
        // On a thread of its own: the run takes a second of real time, which the test's task must not
        // hold a thread of the shared pool for.
        let r = try await offThePool { try IIOBenchmark.run(rate: 1000, seconds: 1) }
        print("bench iio 1 s: received \(r.received)/\(r.sent), p50 \(r.p50Milliseconds) ms, p99 \(r.p99Milliseconds) ms, max \(r.maxMilliseconds) ms")
        #expect(r.mode.hasPrefix("buffered"))
        #expect(r.sent == 1000)
        #expect(r.received == 1000)
        #expect(r.lost == 0)
        #expect(r.p50Milliseconds < 50)
    }
}
