import MotionSources

enum EvdevDiscovery {
    static func reports(_ options: LinuxDiscoveryOptions) -> [LinuxDeviceReport] { [] }
}

public final class EvdevSource: SensorSource, @unchecked Sendable {
    public struct Node: Sendable { public var path: String; public var name: String }
    public let node: Node
    public let info: SourceInfo
    init(node: Node) { self.node = node; info = SourceInfo(identifier: "evdev:" + node.path, name: node.name, sensors: [:]) }
    public func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] { [:] }
}
