import Testing
@testable import MotionDashboard

@Suite struct ControlParserTests {
    private func parse(_ text: String) -> Result<DashboardRequest, DashboardControlError> {
        DashboardControlParser.parse(text)
    }
    private func error(_ text: String) -> DashboardControlError? {
        if case .failure(let e) = parse(text) { return e }
        return nil
    }
    private func control(_ text: String) -> DashboardControl? {
        if case .success(let r) = parse(text) { return r.control }
        return nil
    }

    @Test(arguments: [10, 15, 20, 55, 95, 100])
    func intervalsOnTheSliderAreAccepted(ms: Int) {
        #expect(control(#"{"type":"interval","ms":\#(ms)}"#) == .interval(milliseconds: ms))
    }

    @Test(arguments: ["0", "5", "9", "12", "12.5", "101", "105", "1000", "-20", "1e9"])
    func intervalsOffTheSliderAreOutOfRange(ms: String) {
        let e = error(#"{"type":"interval","ms":\#(ms)}"#)
        #expect(e?.code == .outOfRange)
        #expect(e?.request == "interval")
        #expect(e?.message.contains("10…100 ms in steps of 5 ms") == true)
    }

    @Test(arguments: [#"{"type":"interval"}"#, #"{"type":"interval","ms":"20"}"#, #"{"type":"interval","ms":true}"#,
                      #"{"type":"interval","ms":null}"#, #"{"type":"interval","ms":[20]}"#])
    func intervalsOfTheWrongTypeAreMalformed(text: String) {
        #expect(error(text)?.code == .malformed)
    }

    @Test func startAndStopNameASensor() {
        #expect(control(#"{"type":"start","sensor":"gyro"}"#) == .start(.gyro))
        #expect(control(#"{"type":"stop","sensor":"deviceMotion"}"#) == .stop(.deviceMotion))
        #expect(error(#"{"type":"start","sensor":"barometer"}"#)?.code == .unknownName)
        #expect(error(#"{"type":"start"}"#)?.code == .malformed)
        #expect(error(#"{"type":"stop","sensor":3}"#)?.code == .malformed)
    }

    @Test func filterModesAndFactors() {
        #expect(control(#"{"type":"filter","mode":"lowPass"}"#) == .filter(.init(mode: .lowPass, factor: 0.1)))
        #expect(control(#"{"type":"filter","mode":"highPass","factor":0.5}"#) == .filter(.init(mode: .highPass, factor: 0.5)))
        #expect(control(#"{"type":"filter","mode":"off","factor":1}"#) == .filter(.init(mode: .off, factor: 1)))
        for bad in ["0", "-0.1", "1.5", "0.001", "100"] {
            #expect(error(#"{"type":"filter","mode":"lowPass","factor":\#(bad)}"#)?.code == .outOfRange, "factor \(bad)")
        }
        #expect(error(#"{"type":"filter","mode":"bandPass"}"#)?.code == .unknownName)
        #expect(error(#"{"type":"filter","factor":0.2}"#)?.code == .malformed)
        #expect(error(#"{"type":"filter","mode":"lowPass","factor":"0.2"}"#)?.code == .malformed)
    }

    @Test func referenceFrameNeedsAName() {
        #expect(control(#"{"type":"referenceFrame","frame":"xArbitraryZVertical"}"#) == .referenceFrame("xArbitraryZVertical"))
        #expect(error(#"{"type":"referenceFrame"}"#)?.code == .malformed)
        #expect(error(#"{"type":"referenceFrame","frame":1}"#)?.code == .malformed)
    }

    @Test(arguments: ["", "{", "nope", "[]", "[1,2]", "42", "\"interval\"", "null", #"{"type":"interval","ms":20"#])
    func garbageIsMalformed(text: String) {
        #expect(error(text)?.code == .malformed)
    }

    @Test func unknownOrMissingTypes() {
        #expect(error(#"{"type":"reboot"}"#)?.code == .unknownType)
        #expect(error(#"{"type":"reboot"}"#)?.request == "reboot")
        #expect(error(#"{"ms":20}"#)?.code == .unknownType)
        #expect(error(#"{"type":7}"#)?.code == .unknownType)
    }

    @Test func idsAreEchoedAsJSON() throws {
        let r = try parse(#"{"type":"state","id":"a\"b"}"#).get()
        #expect(r.id == .string(#"a"b"#))
        #expect(try parse(#"{"type":"state","id":42}"#).get().id == .integer(42))
        #expect(error(#"{"type":"state","id":{"x":1}}"#)?.code == .malformed)
        #expect(error(#"{"type":"interval","ms":3,"id":7}"#)?.id == .integer(7))
    }

    @Test func oversizedMessagesAreRefused() {
        let big = #"{"type":"state","pad":""# + String(repeating: "x", count: 5000) + #""}"#
        #expect(error(big)?.code == .malformed)
    }
}
