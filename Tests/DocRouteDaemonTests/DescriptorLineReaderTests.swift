import SystemPackage
import Testing
@testable import DocRouteServer

#if canImport(Glibc)
import Glibc
#endif

/// The descriptor socket's framing: a descriptor is taken only with the first byte of a line, at
/// most one per line; anything else is refused, and nothing refused stays open.
@Suite struct DescriptorLineReaderTests {
    /// A passed descriptor stands in as the write end of a pipe; its read end tells whether it
    /// was closed (end of file once no write end is left), which a descriptor number cannot: tests
    /// running at the same time get closed numbers back at once.
    struct Passed {
        let descriptor: FileDescriptor
        let readEnd: Int32

        init() {
            var ends: [Int32] = [-1, -1]
            _ = pipe(&ends)
            _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
            readEnd = ends[0]
            descriptor = FileDescriptor(rawValue: ends[1])
        }

        /// Whether the write end is still open somewhere (nothing to read, and no end yet).
        func isStillOpen() -> Bool {
            var byte: UInt8 = 0
            return read(readEnd, &byte, 1) == -1 && errno == EAGAIN
        }

        /// Whether the reader closed it (the pipe's read end sees the end); closes the read end.
        func wasClosed() -> Bool {
            var byte: UInt8 = 0
            let count = read(readEnd, &byte, 1)
            close(readEnd)
            return count == 0
        }
    }

    static func descriptor() -> Passed { Passed() }

    @Test func aDescriptorWithTheFirstByteOfALineBelongsToThatLine() throws {
        var reader = DescriptorLineReader()
        let passed = Self.descriptor()
        let first = try reader.feed(Array(#"{"type":"open","#.utf8)[...], descriptor: passed.descriptor, extraDescriptors: false)
        #expect(first.isEmpty)
        let lines = try reader.feed(Array("\"descriptor\":true}\n{\"type\":\"status\"}\n".utf8)[...], descriptor: nil, extraDescriptors: false)
        #expect(lines.count == 2)
        #expect(lines.first?.descriptor == passed.descriptor)
        #expect(lines.last?.descriptor == nil)
        passed.descriptor.closeIgnoringErrors()
        #expect(passed.wasClosed())
    }

    @Test func aDescriptorInsideALineIsRefusedAndClosed() throws {
        var reader = DescriptorLineReader()
        _ = try reader.feed(Array(#"{"type":"open","#.utf8)[...], descriptor: nil, extraDescriptors: false)
        let passed = Self.descriptor()
        #expect(throws: DescriptorLineReader.Violation.descriptorInsideLine) {
            _ = try reader.feed(Array("x".utf8)[...], descriptor: passed.descriptor, extraDescriptors: false)
        }
        #expect(passed.wasClosed(), "the refused descriptor is not kept")
    }

    @Test func moreThanOneDescriptorWithALineIsRefusedAndEveryOneClosed() throws {
        var reader = DescriptorLineReader()
        let earlier = Self.descriptor()
        _ = try reader.feed(Array("{".utf8)[...], descriptor: earlier.descriptor, extraDescriptors: false)
        let passed = Self.descriptor()
        #expect(throws: DescriptorLineReader.Violation.moreThanOneDescriptor) {
            _ = try reader.feed(Array("x".utf8)[...], descriptor: passed.descriptor, extraDescriptors: true)
        }
        #expect(passed.wasClosed() && earlier.wasClosed(), "nothing of the connection's stays open")
    }

    /// A hoard: byte after byte, each with a descriptor, never a newline. The second is refused,
    /// so a connection holds one descriptor at most.
    @Test func aHoardHoldsOneDescriptorAtMost() throws {
        var reader = DescriptorLineReader()
        let first = Self.descriptor()
        _ = try reader.feed(Array("{".utf8)[...], descriptor: first.descriptor, extraDescriptors: false)
        let second = Self.descriptor()
        #expect(throws: DescriptorLineReader.Violation.descriptorInsideLine) {
            _ = try reader.feed(Array("{".utf8)[...], descriptor: second.descriptor, extraDescriptors: false)
        }
        #expect(first.wasClosed() && second.wasClosed())
    }

    @Test func theUnfinishedLinesDescriptorIsClosedWhenTheConnectionEnds() throws {
        var reader = DescriptorLineReader()
        let passed = Self.descriptor()
        _ = try reader.feed(Array("{".utf8)[...], descriptor: passed.descriptor, extraDescriptors: false)
        #expect(passed.isStillOpen(), "held for the unfinished line")
        reader.closeAll()
        #expect(passed.wasClosed())
    }

    @Test func aLineTooLongIsRefused() throws {
        var reader = DescriptorLineReader()
        #expect(throws: DescriptorLineReader.Violation.lineTooLong) {
            _ = try reader.feed([UInt8](repeating: UInt8(ascii: "a"), count: (1 << 20) + 2)[...], descriptor: nil, extraDescriptors: false)
        }
    }
}
