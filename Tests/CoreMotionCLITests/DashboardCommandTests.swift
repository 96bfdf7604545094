@testable import CoreMotionCLI
import MotionSources
import Testing

@Suite struct DashboardCommandTests {
    @Test func defaultsToLoopbackOn8080() throws {
        let c = try DashboardCommand.parse([])
        #expect(c.host == "127.0.0.1")
        #expect(c.port == 8080)
        #expect(c.sourceOptions.source == nil)
    }

    @Test func takesSourceHostAndPort() throws {
        let c = try DashboardCommand.parse(["--source", "sim:walk", "--host", "0.0.0.0", "--port", "9000"])
        #expect(c.sourceOptions.source == "sim:walk")
        #expect(c.host == "0.0.0.0")
        #expect(c.port == 9000)
    }

    @Test func refusesBadPorts() {
        #expect(throws: (any Error).self) { try DashboardCommand.parse(["--port", "70000"]) }
        #expect(throws: (any Error).self) { try DashboardCommand.parse(["--port", "-1"]) }
        #expect(throws: (any Error).self) { try DashboardCommand.parse(["--port", "http"]) }
    }

    @Test func benchRefusesIntervalsOffTheSlider() throws {
        #expect(throws: (any Error).self) { try BenchDashboardCommand.parse(["--interval-ms", "12"]) }
        #expect(try BenchDashboardCommand.parse([]).clients == 10)
    }
}
