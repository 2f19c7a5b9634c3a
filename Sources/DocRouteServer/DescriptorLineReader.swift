import DocRouteProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Frames the descriptor socket's byte stream into lines and gives each line the descriptors
/// that arrived with its bytes.
///
/// The kernel never merges a message that carries descriptors into data read before it, so a
/// `recvmsg` returns a passed descriptor with the byte it was sent with: PROTOCOL.md has the client
/// send it with the first byte of its line. A descriptor belongs to the line holding that byte.
package struct DescriptorLineReader {
    struct Line {
        var frame: LineFramer.Frame
        var descriptors: [Int32]
        /// More descriptors came than fit, or the control message was cut short.
        var truncated: Bool
    }

    var framer = LineFramer()
    /// Stream offset of the next byte to arrive, and of the first byte of the line being framed.
    var offset = 0
    var lineStart = 0
    /// Descriptors not yet given to a line, with the stream offset they arrived at.
    var waiting: [(offset: Int, descriptors: [Int32], truncated: Bool)] = []

    /// Adds one `recvmsg`'s bytes and descriptors; returns the lines completed.
    mutating func feed(_ bytes: ArraySlice<UInt8>, descriptors: [Int32], truncated: Bool) -> [Line] {
        if !descriptors.isEmpty || truncated {
            waiting.append((offset, descriptors, truncated))
        }
        offset += bytes.count
        var lines: [Line] = []
        for frame in framer.feed(bytes) {
            let end: Int
            switch frame {
            case .line(let content): end = lineStart + content.count + 1
            // The connection ends after these; the offsets no longer matter.
            case .lineTooLong, .incompleteLine: end = offset
            }
            var attached: [Int32] = []
            var cut = false
            while let first = waiting.first, first.offset < end {
                attached += first.descriptors
                cut = cut || first.truncated
                waiting.removeFirst()
            }
            lines.append(Line(frame: frame, descriptors: attached, truncated: cut))
            lineStart = end
        }
        return lines
    }

    /// Closes descriptors that no line took (the connection ended).
    mutating func closeAll() {
        for entry in waiting {
            for descriptor in entry.descriptors { close(descriptor) }
        }
        waiting = []
    }
}
