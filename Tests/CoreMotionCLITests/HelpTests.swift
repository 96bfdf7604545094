@testable import CoreMotionCLI
import Testing

@Suite struct RootCommandTests {
    @Test func rootCommandIsNamedCoremotion() {
        #expect(CoreMotionCommand.configuration.commandName == "coremotion")
    }
}
