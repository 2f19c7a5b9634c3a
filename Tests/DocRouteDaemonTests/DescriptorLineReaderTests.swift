import SystemPackage
import Testing
@testable import DocRouteServer

#if canImport(Glibc)
import Glibc
#endif

/// The descriptor socket's framing: a descriptor is taken only with the first byte of a line, at
/// most one per line; anything else is refused, and nothing refused stays open.
@Suite struct DescriptorLineReaderTests {
    /// A fresh descriptor (of /dev/null) and whether it is still open later.
    static func descriptor() -> FileDescriptor {
        FileDescriptor(rawValue: open("/dev/null", O_RDONLY | O_CLOEXEC))
    }

    static func isOpen(_ descriptor: FileDescriptor) -> Bool {
        fcntl(descriptor.rawValue, F_GETFD) != -1
    }

    @Test func aDescriptorWithTheFirstByteOfALineBelongsToThatLine() throws {
        var reader = DescriptorLineReader()
        let passed = Self.descriptor()
        let first = try reader.feed(Array(#"{"type":"open","#.utf8)[...], descriptor: passed, extraDescriptors: false)
        #expect(first.isEmpty)
        let lines = try reader.feed(Array("\"descriptor\":true}\n{\"type\":\"status\"}\n".utf8)[...], descriptor: nil, extraDescriptors: false)
        #expect(lines.count == 2)
        #expect(lines.first?.descriptor == passed)
        #expect(lines.last?.descriptor == nil)
        passed.closeIgnoringErrors()
    }

    @Test func aDescriptorInsideALineIsRefusedAndClosed() throws {
        var reader = DescriptorLineReader()
        _ = try reader.feed(Array(#"{"type":"open","#.utf8)[...], descriptor: nil, extraDescriptors: false)
        let passed = Self.descriptor()
        #expect(throws: DescriptorLineReader.Violation.descriptorInsideLine) {
            _ = try reader.feed(Array("x".utf8)[...], descriptor: passed, extraDescriptors: false)
        }
        #expect(!Self.isOpen(passed), "the refused descriptor is not kept")
    }

    @Test func moreThanOneDescriptorWithALineIsRefusedAndEveryOneClosed() throws {
        var reader = DescriptorLineReader()
        let earlier = Self.descriptor()
        _ = try reader.feed(Array("{".utf8)[...], descriptor: earlier, extraDescriptors: false)
        let passed = Self.descriptor()
        #expect(throws: DescriptorLineReader.Violation.moreThanOneDescriptor) {
            _ = try reader.feed(Array("x".utf8)[...], descriptor: passed, extraDescriptors: true)
        }
        #expect(!Self.isOpen(passed) && !Self.isOpen(earlier), "nothing of the connection's stays open")
    }

    /// A hoard: byte after byte, each with a descriptor, never a newline. The second is refused,
    /// so a connection holds one descriptor at most.
    @Test func aHoardHoldsOneDescriptorAtMost() throws {
        var reader = DescriptorLineReader()
        let first = Self.descriptor()
        _ = try reader.feed(Array("{".utf8)[...], descriptor: first, extraDescriptors: false)
        let second = Self.descriptor()
        #expect(throws: DescriptorLineReader.Violation.descriptorInsideLine) {
            _ = try reader.feed(Array("{".utf8)[...], descriptor: second, extraDescriptors: false)
        }
        #expect(!Self.isOpen(first) && !Self.isOpen(second))
    }

    @Test func theUnfinishedLinesDescriptorIsClosedWhenTheConnectionEnds() throws {
        var reader = DescriptorLineReader()
        let passed = Self.descriptor()
        _ = try reader.feed(Array("{".utf8)[...], descriptor: passed, extraDescriptors: false)
        #expect(Self.isOpen(passed))
        reader.closeAll()
        #expect(!Self.isOpen(passed))
    }

    @Test func aLineTooLongIsRefused() throws {
        var reader = DescriptorLineReader()
        #expect(throws: DescriptorLineReader.Violation.lineTooLong) {
            _ = try reader.feed([UInt8](repeating: UInt8(ascii: "a"), count: (1 << 20) + 2)[...], descriptor: nil, extraDescriptors: false)
        }
    }
}
