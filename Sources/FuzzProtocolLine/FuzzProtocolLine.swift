import DocRouteProtocol
import FuzzSupport

/// Frames `bytes` fed in chunks whose sizes cycle through `sizes`, then ends the input.
func frames(_ bytes: UnsafeRawBufferPointer, chunkSizes sizes: [Int], maximumLineLength: Int) -> [LineFramer.Frame] {
    var framer = LineFramer(maximumLineLength: maximumLineLength)
    var frames: [LineFramer.Frame] = []
    var offset = 0
    var turn = 0
    while offset < bytes.count {
        let end = min(bytes.count, offset + sizes[turn % sizes.count])
        frames += framer.feed(bytes[offset..<end])
        offset = end
        turn += 1
    }
    if let last = framer.finish() { frames.append(last) }
    return frames
}

/// libFuzzer entry point: any bytes as what a client sends down the socket. Framing must not depend
/// on chunking; every line either decodes or is a bad-request error; what decodes survives a round trip.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProtocolLine(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(start), count: start == nil ? 0 : count)
    // A short limit reaches the too-long paths with small inputs.
    let maximum = 1024
    let whole = frames(bytes, chunkSizes: [max(1, bytes.count)], maximumLineLength: maximum)
    let pieces = frames(bytes, chunkSizes: [1, 5, 2, 97, 3, 301], maximumLineLength: maximum)
    precondition(whole == pieces, "framing depends on chunking")

    for frame in whole {
        let line: [UInt8]
        switch frame {
        case .line(let bytes), .incompleteLine(let bytes): line = bytes
        case .lineTooLong: continue
        }
        precondition(line.count <= maximum, "a framed line is longer than the limit")
        precondition(!line.contains(UInt8(ascii: "\n")), "a framed line holds a line break")
        do {
            let message = try ClientMessage(decoding: line)
            let encoded = message.encodedLine()
            precondition(encoded.last == UInt8(ascii: "\n"), "an encoded line does not end in a line break")
            let again = try ClientMessage(decoding: encoded.dropLast())
            precondition(again == message, "a client message changed in a round trip: \(message) vs \(again)")
        } catch {
            precondition(error.code == .badRequest, "a client line failed with \(error.code), not bad-request")
        }
        // Handlers' side of the wire: a daemon line must decode or fail cleanly, too.
        if let message = try? DaemonMessage(decoding: line) {
            let again = try? DaemonMessage(decoding: message.encodedLine().dropLast())
            precondition(again == message, "a daemon message changed in a round trip: \(message)")
        }
    }
    return 0
}

/// The program's entry point (see ``runFuzzer(argc:argv:testOneInput:)``).
@_cdecl("FuzzProtocolLine_main")
public func fuzzProtocolLineMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runFuzzer(argc: argc, argv: argv, testOneInput: fuzzProtocolLine)
}
