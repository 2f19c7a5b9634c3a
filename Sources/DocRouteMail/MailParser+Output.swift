extension MailParser {
    /// The decoded bytes waiting for the sink: one fixed allocation for the parser's life, so the
    /// decoders write without bounds checks or copy-on-write.
    final class OutputBuffer {
        let base: UnsafeMutableRawPointer
        let capacity: Int

        init(capacity: Int) {
            self.capacity = capacity
            base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        }

        deinit {
            base.deallocate()
        }
    }

    /// Body bytes of the current part: decoded into the output buffer when an attachment is wanted,
    /// dropped otherwise.
    mutating func emitContent(_ bytes: UnsafeRawBufferPointer) throws {
        guard let encoding = decoding, let start = bytes.baseAddress, bytes.count > 0 else { return }
        var offset = 0
        while offset < bytes.count {
            let count = min(bytes.count - offset, Self.pieceLimit)
            let piece = UnsafeRawBufferPointer(start: start + offset, count: count)
            if outputCount + count + 4 > output.capacity { try flushOutput() }
            let destination = output.base + outputCount
            let produced: Int
            switch encoding {
            case .identity:
                destination.copyMemory(from: piece.baseAddress!, byteCount: count)
                produced = count
            case .base64:
                produced = base64.decode(piece, into: destination)
            case .quotedPrintable:
                produced = quotedPrintable.decode(piece, into: destination)
            }
            outputCount += produced
            decodedSize += Int64(produced)
            offset += count
        }
    }

    mutating func emitContent(_ bytes: ArraySlice<UInt8>) throws {
        try bytes.withUnsafeBytes { try emitContent($0) }
    }

    /// Hands the buffered bytes to the sink.
    mutating func flushOutput() throws {
        guard outputCount > 0 else { return }
        let ready = UnsafeRawBufferPointer(start: output.base, count: outputCount)
        outputCount = 0
        try sink.attachmentBytes(ready)
    }
}
