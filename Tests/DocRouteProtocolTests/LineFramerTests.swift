import DocRouteProtocol
import Testing

@Suite struct LineFramerTests {
    @Test func yieldsCompleteLinesWithoutTheNewline() {
        var framer = LineFramer()
        #expect(framer.feed(bytes("{\"a\":1}\n\n{\"b\":2}\n{\"c\"")) == [.line(bytes("{\"a\":1}")), .line([]), .line(bytes("{\"b\":2}"))])
        #expect(framer.bufferedByteCount == 4)
        #expect(framer.feed(bytes(":3}\n")) == [.line(bytes("{\"c\":3}"))])
        #expect(framer.finish() == nil)
    }

    @Test func reportsAnIncompleteTrailingLineAtEndOfInput() {
        var framer = LineFramer()
        #expect(framer.feed(bytes("one\ntw")) == [.line(bytes("one"))])
        #expect(framer.finish() == .incompleteLine(bytes("tw")))
        // finish() resets: the framer can serve a new stream.
        #expect(framer.feed(bytes("x\n")) == [.line(bytes("x"))])
    }

    @Test func splitAtEveryByteBoundaryGivesTheSameLines() {
        let input = bytes("{\"type\":\"hello\",\"protocol\":1}\n{\"type\":\"status\",\"id\":\"ü\"}\n\npartial")
        var whole = LineFramer()
        let expected = whole.feed(input)
        #expect(expected.count == 3)
        for first in 0...input.count {
            for second in first...input.count {
                var framer = LineFramer()
                var frames = framer.feed(input[..<first])
                frames += framer.feed(input[first..<second])
                frames += framer.feed(input[second...])
                #expect(frames == expected, "split at \(first), \(second)")
                #expect(framer.finish() == .incompleteLine(bytes("partial")))
            }
        }
    }

    @Test func byteByByteFeedingGivesTheSameLines() {
        let input = bytes("a\nbc\n\ndef\n")
        var framer = LineFramer()
        var frames: [LineFramer.Frame] = []
        for byte in input { frames += framer.feed([byte]) }
        #expect(frames == [.line(bytes("a")), .line(bytes("bc")), .line([]), .line(bytes("def"))])
    }

    @Test func aLineOfExactlyTheMaximumIsAccepted() {
        var framer = LineFramer()
        let line = [UInt8](repeating: UInt8(ascii: "x"), count: WireProtocol.maximumLineLength)
        let frames = framer.feed(line + [UInt8(ascii: "\n")])
        // Compared as summaries: a failure must not print a megabyte of bytes.
        #expect(summary(frames) == ["line \(WireProtocol.maximumLineLength)"])
        let lineIsIntact = frames == [.line(line)]
        #expect(lineIsIntact)
    }

    /// Frames as short text, so an unexpected huge line shows as its length.
    func summary(_ frames: [LineFramer.Frame]) -> [String] {
        frames.map { frame in
            switch frame {
            case .line(let bytes): "line \(bytes.count)"
            case .lineTooLong: "too long"
            case .incompleteLine(let bytes): "incomplete \(bytes.count)"
            }
        }
    }

    @Test func twoMiBLineIsReportedOnceThenTheConnectionStaysUsable() {
        var framer = LineFramer()
        let huge = [UInt8](repeating: UInt8(ascii: "x"), count: 2 << 20)
        var frames: [LineFramer.Frame] = []
        // Arrives in 64 KiB reads, as from a socket.
        var offset = 0
        while offset < huge.count {
            let end = min(offset + 65_536, huge.count)
            frames += framer.feed(huge[offset..<end])
            // Never holds much more than one maximum line.
            #expect(framer.bufferedByteCount <= WireProtocol.maximumLineLength)
            offset = end
        }
        frames += framer.feed(bytes("\n{\"type\":\"status\"}\n"))
        #expect(summary(frames) == ["too long", "line 17"])
        #expect(frames.last == .line(bytes("{\"type\":\"status\"}")))
        #expect(framer.finish() == nil)
    }

    @Test func tooLongLineInOneChunkWithItsNewlineIsReportedOnce() {
        var framer = LineFramer(maximumLineLength: 4)
        #expect(framer.feed(bytes("12345\nok\n")) == [.lineTooLong, .line(bytes("ok"))])
        #expect(framer.feed(bytes("1234")) == [])
        #expect(framer.feed(bytes("5")) == [.lineTooLong])
        #expect(framer.feed(bytes("678")) == [])
        #expect(framer.feed(bytes("9\nyes\n")) == [.line(bytes("yes"))])
    }

    @Test func endOfInputInsideADiscardedLineReportsNothingMore() {
        var framer = LineFramer(maximumLineLength: 2)
        #expect(framer.feed(bytes("abc")) == [.lineTooLong])
        #expect(framer.finish() == nil)
    }
}
