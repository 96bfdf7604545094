import MotionSources
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Receives HyperIMU's UDP datagrams on the spec's HOST:PORT. Each datagram holds one or more CSV
/// lines (ended by CRLF or `#`); the last needs no terminator.
final class HyperIMUReceiver: PhoneTransport, Sendable {
    private weak let source: PhoneSource?
    private let spec: PhoneSpec
    private let eventLoop: any EventLoop
    /// The configured layout.
    let layout: [SensorKind?]
    private let decoder: NIOLockedValueBox<HyperIMUDecoder>
    private let channel = NIOLockedValueBox<(any Channel)?>(nil)

    init(source: PhoneSource) throws(SourceError) {
        self.source = source
        spec = source.spec
        eventLoop = source.eventLoop
        if let text = spec.parameters["sensors"] {
            guard let layout = HyperIMUDecoder.layout(parsing: text) else {
                throw SourceError(.unavailable, "\(spec): sensors=\(text); expected the app's order as a list of acc, gyro, mag or skip, such as sensors=acc,gyro,mag")
            }
            self.layout = layout
        } else {
            layout = HyperIMUDecoder().layout
        }
        decoder = NIOLockedValueBox(HyperIMUDecoder(layout: layout))
    }

    var localAddress: (host: String, port: Int)? {
        channel.withLockedValue { $0?.localAddress }.flatMap { a in a.ipAddress.map { ($0, a.port ?? 0) } }
    }

    func start() throws(SourceError) {
        let bootstrap = DatagramBootstrap(group: eventLoop)
            .channelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .channelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 65_536))
            .channelInitializer { [weak self] channel in
                guard let self else { return channel.eventLoop.makeSucceededVoidFuture() }
                return channel.pipeline.addHandler(HyperIMUHandler(receiver: self))
            }
        let bound: any Channel
        do {
            bound = try bootstrap.bind(host: spec.host, port: spec.port).wait()
        } catch {
            throw bindError(spec, error)
        }
        channel.withLockedValue { $0 = bound }
        let port = bound.localAddress?.port ?? spec.port
        let hosts = reachableAddresses(forListeningHost: spec.host)
        source?.log("HyperIMU: listening for UDP on \(spec.host):\(port). In the app: Settings → Stream → protocol UDP, server IP \(hosts.joined(separator: " or ")), port \(port); sensors in this order: \(layout.map { $0?.rawValue ?? "skip" }.joined(separator: ", ")) (change with ?sensors=)")
    }

    func stop() {
        channel.withLockedValue { c in
            c?.close(promise: nil)
            c = nil
        }
    }

    func datagram(_ bytes: ByteBufferView, from peer: String, arrival: Double) {
        guard let source else { return }
        var splitter = LineSplitter(maximumLineLength: 65_536, hashEnds: true)
        var lines = splitter.feed(bytes)
        if let last = splitter.flush() { lines.append(last) }
        if lines.isEmpty { source.malformed("empty datagram from \(peer)") }
        for line in lines {
            let decoded = decoder.withLockedValue { $0.decode(line: line) }
            source.received(decoded, arrival: arrival, peer: peer)
        }
    }
}

final class HyperIMUHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    private let receiver: HyperIMUReceiver

    init(receiver: HyperIMUReceiver) { self.receiver = receiver }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let arrival = MonotonicClock.now()
        let envelope = unwrapInboundIn(data)
        receiver.datagram(envelope.data.readableBytesView, from: peerText(envelope.remoteAddress), arrival: arrival)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A UDP socket error (ICMP unreachable and the like) concerns one datagram only.
    }
}
