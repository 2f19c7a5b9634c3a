import DocRoutePlatform
import DocRouteProtocol
import SystemPackage

/// Frames the descriptor socket's byte stream into lines, and gives a line the one descriptor
/// that came with its first byte.
///
/// PROTOCOL.md has a client send a descriptor with the first byte of its line, in one `sendmsg`.
/// The kernel never merges bytes that carry descriptors into bytes read before them, so such a
/// descriptor arrives at the start of a `recvmsg`, and that start must be the start of a line.
/// Anything else (a descriptor in the middle of a line, more than one with a line) is refused and
/// ends the connection: so the daemon holds at most one passed descriptor per connection, whatever
/// a client sends, and a client cannot fill its descriptor table with half-sent lines.
package struct DescriptorLineReader {
    /// A complete line and the descriptor passed with it (the caller owns and closes it).
    package struct Line {
        package var bytes: [UInt8]
        package var descriptor: FileDescriptor?
    }

    /// Why the connection must end.
    package enum Violation: Error, Equatable {
        /// A descriptor came with a byte that does not start a line.
        case descriptorInsideLine
        /// More than one descriptor came with one `sendmsg`.
        case moreThanOneDescriptor
        /// A line longer than the protocol allows.
        case lineTooLong

        /// The `bad-request` message the client is sent before the connection closes.
        package var message: String {
            switch self {
            case .descriptorInsideLine:
                "a descriptor must be passed with the first byte of its line (one sendmsg per line); the connection is closed"
            case .moreThanOneDescriptor:
                "at most one descriptor may be passed with a line; the connection is closed"
            case .lineTooLong:
                "line longer than \(WireProtocol.maximumLineLength) bytes; the connection is closed"
            }
        }
    }

    var framer = LineFramer()
    /// The descriptor of the line being framed, until the line is complete.
    var pending: FileDescriptor?

    package init() {}

    /// Bytes held for the line not yet complete.
    package var unfinishedByteCount: Int { framer.bufferedByteCount }

    /// Adds one `recvmsg`'s bytes and descriptor; returns the lines completed, in order. On a
    /// violation every descriptor held (the new one included) is closed.
    package mutating func feed(_ bytes: ArraySlice<UInt8>, descriptor: FileDescriptor?, extraDescriptors: Bool) throws(Violation) -> [Line] {
        if extraDescriptors {
            descriptor?.closeIgnoringErrors()
            closeAll()
            throw .moreThanOneDescriptor
        }
        if let descriptor {
            guard framer.bufferedByteCount == 0, pending == nil, !bytes.isEmpty else {
                descriptor.closeIgnoringErrors()
                closeAll()
                throw .descriptorInsideLine
            }
            pending = descriptor
        }
        var lines: [Line] = []
        for frame in framer.feed(bytes) {
            switch frame {
            case .line(let content):
                lines.append(Line(bytes: content, descriptor: pending.take()))
            case .lineTooLong:
                for line in lines { line.descriptor?.closeIgnoringErrors() }
                closeAll()
                throw .lineTooLong
            case .incompleteLine:
                // Only finish() reports it.
                break
            }
        }
        return lines
    }

    /// Closes the descriptor of the unfinished line, if any (the connection ended).
    package mutating func closeAll() {
        pending.take()?.closeIgnoringErrors()
    }
}
