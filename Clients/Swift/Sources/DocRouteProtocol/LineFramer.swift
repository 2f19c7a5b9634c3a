/// Splits a byte stream into protocol lines.
///
/// Feed it chunks as they arrive; it returns each complete line without its `\n`. A line longer
/// than ``maximumLineLength`` is reported once as ``Frame/lineTooLong`` as soon as it is known
/// to be too long, and its bytes are dropped up to the next `\n`, so the connection stays
/// usable. Pure: no I/O, no clocks.
public struct LineFramer: Sendable {
    /// What the framer found in the input.
    public enum Frame: Sendable, Hashable {
        /// A complete line, without its `\n`.
        case line([UInt8])
        /// A line exceeded the maximum length; it is discarded up to its `\n`.
        case lineTooLong
        /// Input ended in the middle of a line (no `\n` after these bytes).
        case incompleteLine([UInt8])
    }

    /// The longest line accepted, in bytes, not counting `\n`.
    public let maximumLineLength: Int

    private var buffer: [UInt8] = []
    /// Where the current (incomplete) line starts in `buffer`.
    private var lineStart = 0
    /// Bytes before this index are known to hold no `\n` of the current line.
    private var scanned = 0
    /// Inside a line already reported as too long: drop bytes until `\n`.
    private var discarding = false

    /// Creates a framer; the default limit is PROTOCOL.md's 1 MiB.
    public init(maximumLineLength: Int = WireProtocol.maximumLineLength) {
        precondition(maximumLineLength > 0, "maximumLineLength must be positive")
        self.maximumLineLength = maximumLineLength
    }

    /// The number of bytes held for the line not yet complete.
    public var bufferedByteCount: Int { buffer.count - lineStart }

    /// Adds a chunk of input and returns the lines it completed, in order.
    public mutating func feed(_ chunk: some Collection<UInt8>) -> [Frame] {
        var frames: [Frame] = []
        var rest = chunk[...]
        if discarding {
            guard let newline = rest.firstIndex(of: UInt8(ascii: "\n")) else { return frames }
            discarding = false
            rest = rest[rest.index(after: newline)...]
        }
        buffer.append(contentsOf: rest)
        while let newline = buffer[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
            if newline - lineStart > maximumLineLength {
                frames.append(.lineTooLong)
            } else {
                frames.append(.line(Array(buffer[lineStart..<newline])))
            }
            lineStart = newline + 1
            scanned = lineStart
        }
        scanned = buffer.count
        if buffer.count - lineStart > maximumLineLength {
            frames.append(.lineTooLong)
            discarding = true
            buffer.removeAll(keepingCapacity: false)
            lineStart = 0
            scanned = 0
        }
        compact()
        return frames
    }

    /// Marks the end of input: returns the incomplete last line if there is one, and resets the
    /// framer. A too-long line already reported is not reported again.
    public mutating func finish() -> Frame? {
        defer {
            buffer.removeAll(keepingCapacity: false)
            lineStart = 0
            scanned = 0
            discarding = false
        }
        guard !discarding, lineStart < buffer.count else { return nil }
        return .incompleteLine(Array(buffer[lineStart...]))
    }

    /// Drops consumed bytes once they are at least half the buffer, so copying stays linear.
    private mutating func compact() {
        if lineStart == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
            lineStart = 0
            scanned = 0
        } else if lineStart > 0, lineStart >= buffer.count / 2 {
            buffer.removeSubrange(..<lineStart)
            scanned -= lineStart
            lineStart = 0
        }
    }
}
