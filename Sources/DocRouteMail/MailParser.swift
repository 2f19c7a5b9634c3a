import CDocRouteBytes

/// A streaming RFC 5322 + MIME parser that hands each attachment's decoded bytes to a sink as they
/// are decoded.
///
/// Feed the message in chunks of any size with ``feed(_:)``, then call ``finish()``. Memory stays
/// bounded whatever the message: one header section (at most ``Limits/maximumHeaderBytes``), one
/// line prefix for boundary checks, a 128 KiB output buffer, one small frame per open multipart
/// (at most ``Limits/maximumDepth``). Nesting is followed with an explicit stack, never recursion.
///
/// Malformed input never fails the parse: a part that cannot be read is skipped, a cut base64 or a
/// missing closing boundary flags the attachment (``AttachmentDamage``), and every such finding is
/// listed in the ``MailSummary``. Only the sink's own errors are thrown.
///
/// ```swift
/// var parser = MailParser(sink: collector)
/// try parser.feed(chunk)          // as many times as needed
/// let summary = try parser.finish()
/// ```
///
/// Pure: no files, no clocks, no locale. Not copyable: a copy would share the output buffer.
package struct MailParser: ~Copyable {
    /// The bounds this parser keeps to.
    package let limits: Limits
    let sink: any AttachmentSink

    enum Mode {
        /// Reading the header section of ``target``.
        case headers
        /// Reading body bytes: a wanted attachment's (``leaf``) or bytes that are skipped.
        case body
    }

    enum LineEnding: UInt8 {
        case none = 0, lf = 1, crlf = 2
    }

    var mode = Mode.headers
    var header = MailHeaderSection()
    var target = EntityTarget(path: "", depth: 0, isMessage: true, defaultType: "text/plain", frameCount: 0, envelope: nil)
    /// Open multiparts, outermost first.
    var frames: [Frame] = []
    /// The wanted attachment being decoded, if any.
    var leaf: Leaf?
    /// How the wanted attachment's bytes are decoded; nil while body bytes are skipped. Kept apart
    /// from ``leaf`` (and the decoders below too) so the per-chunk path touches no reference counts.
    var decoding: TransferEncoding?
    var base64 = Base64StreamDecoder()
    var quotedPrintable = QuotedPrintableStreamDecoder()
    var decodedSize: Int64 = 0
    var partCount = 0

    // The line engine. In the body, a line's break is held back (`pendingLineEnding`) until the next
    // line shows it is not a boundary, because the break before a boundary belongs to the boundary.
    var atLineStart = true
    var pendingLineEnding = LineEnding.none
    /// The body chunk ended in a CR whose LF may start the next chunk.
    var heldCR = false
    /// A header line being read, or the start of a body line that may be a boundary (it starts with `-`).
    var lineBuffer: [UInt8] = []
    /// How long a body line may be and still be a boundary of an open multipart.
    var boundaryLineLimit = 0
    /// Nothing more will be read (a fatal problem): the rest of the input is skipped.
    var skippingRest = false

    let output = OutputBuffer(capacity: 128 * 1024 + 64)
    var outputCount = 0

    // The summary in progress.
    var envelope = MailEnvelope()
    var isMIME = false
    var attachments: [MailAttachmentRecord] = []
    var problems: [MailProblem] = []
    var byteCount: Int64 = 0
    var failed = false
    var finished = false

    // Absolute input offsets, to say where an attached message's bytes are (they overlap the bytes
    // of the attachments inside it, so they are located rather than copied).
    /// Where the current chunk starts in the input.
    var chunkBase: Int64 = 0
    /// Just after the header line being processed, its break included.
    var headerLineEnd: Int64 = 0
    /// The break of the line before the header line being processed.
    var previousHeaderEnding = LineEnding.none
    /// Where the body of the entity whose header just ended starts.
    var bodyStart: Int64 = 0
    /// Where the boundary line being handled starts.
    var boundaryLineStart: Int64 = 0
    /// Attached messages (`message/rfc822` parts) whose bytes are still running, outermost first.
    var openMessages: [OpenMessage] = []

    /// The largest slice decoded in one step (the output buffer holds two).
    static let pieceLimit = 64 * 1024

    /// A parser that reports attachments to `sink`.
    package init(sink: some AttachmentSink, limits: Limits = Limits()) {
        self.sink = sink
        self.limits = limits
    }

    /// Parses the next bytes of the message. Rethrows the sink's errors; after one (or after
    /// ``finish()``), the parser ignores further input.
    package mutating func feed(_ bytes: UnsafeRawBufferPointer) throws {
        guard !failed, !finished, let base = bytes.baseAddress, bytes.count > 0 else { return }
        chunkBase = byteCount
        byteCount += Int64(bytes.count)
        let chunk = UnsafeRawBufferPointer(start: base, count: bytes.count)
        var position = 0
        do {
            while position < chunk.count {
                switch mode {
                case .headers: position = try consumeHeader(chunk, from: position)
                case .body: position = try consumeBody(chunk, from: position)
                }
            }
        } catch {
            failed = true
            throw error
        }
    }

    /// Parses the next bytes of the message.
    package mutating func feed(_ bytes: some Collection<UInt8>) throws {
        let array = Array(bytes)
        try array.withUnsafeBytes { try feed($0) }
    }

    /// Ends the input: closes what is open (flagging what was cut short) and returns what was found.
    package mutating func finish() throws -> MailSummary {
        if !failed, !finished {
            finished = true
            do {
                try finishInput()
            } catch {
                failed = true
                throw error
            }
        }
        return MailSummary(envelope: envelope, isMIME: isMIME, attachments: attachments, problems: problems, byteCount: byteCount)
    }

    // MARK: Header lines

    /// Reads header bytes up to and including one line break; returns where it stopped.
    mutating func consumeHeader(_ chunk: UnsafeRawBufferPointer, from start: Int) throws -> Int {
        let base = chunk.baseAddress!
        let found = docroute_find_byte(base + start, 0x0A, chunk.count - start)
        let end = found.map { UnsafeRawPointer($0) - base } ?? chunk.count
        header.byteCount += end - start + (found == nil ? 0 : 1)
        if header.byteCount > limits.maximumHeaderBytes {
            headerTooLarge(atLineStart: found != nil)
            return found == nil ? chunk.count : end + 1
        }
        lineBuffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[start..<end]))
        guard found != nil else { return chunk.count }
        var ending = LineEnding.lf
        if lineBuffer.last == 0x0D {
            lineBuffer.removeLast()
            ending = .crlf
        }
        var line: [UInt8] = []
        swap(&line, &lineBuffer)
        headerLineEnd = chunkBase + Int64(end) + 1
        try processHeaderLine(line[...], ending: ending)
        return end + 1
    }

    /// One complete header line (without its break).
    mutating func processHeaderLine(_ line: ArraySlice<UInt8>, ending: LineEnding) throws {
        defer { previousHeaderEnding = ending }
        let lineStart = headerLineEnd - Int64(line.count + ending.count)
        if line.isEmpty {
            bodyStart = headerLineEnd
            try endHeader()
            return
        }
        if line.first == 0x20 || line.first == 0x09 {
            header.continueField(line)
            return
        }
        if line.count >= 2, line.first == 0x2D, let match = matchBoundary(line) {
            boundaryLineStart = lineStart
            try handleBoundary(match)
            return
        }
        if header.startField(line) { return }
        let isTop = target.depth == 0
        if isTop, header.fieldCount == 0 {
            // An mbox "From " separator line is tolerated before the header.
            if byteCount > 0, line.starts(with: "From ".utf8), header.byteCount == line.count + ending.count { return }
            noHeader()
            return
        }
        // Not a field: the header ended without its blank line, and this line is the body's first.
        bodyStart = lineStart
        try endHeader()
        // A forwarded message (or a digest's part) cannot have a header either: it ends at once.
        for _ in 0..<4 where mode == .headers {
            try endHeader()
        }
        guard mode == .body else { return }
        try emitContent(line)
        pendingLineEnding = ending
        atLineStart = true
    }

    mutating func headerTooLarge(atLineStart lineStart: Bool) {
        lineBuffer = []
        let isTop = target.depth == 0
        record(.headerTooLarge, target.path, isTop
               ? "the message's header is over \(limits.maximumHeaderBytes) bytes; the message cannot be read"
               : "the header of part \(target.path) is over \(limits.maximumHeaderBytes) bytes; the part is skipped")
        header = MailHeaderSection()
        mode = .body
        leaf = nil
        decoding = nil
        if isTop {
            skipRest()
        } else {
            atLineStart = lineStart
            pendingLineEnding = .none
        }
    }

    mutating func noHeader() {
        record(.noHeader, "", "the input does not start with a header field; it is not a mail message")
        skipRest()
    }

    mutating func skipRest() {
        skippingRest = true
        mode = .body
        leaf = nil
        decoding = nil
        frames = []
        openMessages = []
        lineBuffer = []
        updateBoundaryLineLimit()
    }

    // MARK: Body lines

    /// Reads body bytes; returns where it stopped (the end, or just after a boundary line).
    mutating func consumeBody(_ chunk: UnsafeRawBufferPointer, from start: Int) throws -> Int {
        let count = chunk.count
        if skippingRest || (frames.isEmpty && decoding == nil) { return count }
        if frames.isEmpty {
            // No boundary can end this part: everything is content.
            if heldCR {
                heldCR = false
                try emitContent(Self.carriageReturn)
            }
            try emitPendingLineEnding()
            try emitContent(UnsafeRawBufferPointer(rebasing: chunk[start...]))
            return count
        }
        let bytes = chunk.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var position = start
        while position < count {
            if heldCR {
                heldCR = false
                if bytes[position] == 0x0A {
                    pendingLineEnding = .crlf
                    atLineStart = true
                    position += 1
                    continue
                }
                try emitContent(Self.carriageReturn)
            }
            if !lineBuffer.isEmpty {
                // A line starting with `-`: collected until its end shows whether it is a boundary.
                let found = docroute_find_byte(bytes + position, 0x0A, count - position)
                let end = found.map { UnsafeRawPointer($0) - UnsafeRawPointer(bytes) } ?? count
                // A boundary starts with two dashes; a line with one is content at once.
                let singleDash = lineBuffer.count == 1 && bytes[position] != 0x2D
                if singleDash || lineBuffer.count + (end - position) > boundaryLineLimit {
                    try emitUndecidedLine()
                    atLineStart = false
                    // falls through to the content run below
                } else {
                    lineBuffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[position..<end]))
                    guard found != nil else { return count }
                    position = end + 1
                    var ending = LineEnding.lf
                    if lineBuffer.last == 0x0D {
                        lineBuffer.removeLast()
                        ending = .crlf
                    }
                    if let match = matchBoundary(lineBuffer[...]) {
                        boundaryLineStart = chunkBase + Int64(position) - Int64(lineBuffer.count + ending.count)
                        lineBuffer.removeAll(keepingCapacity: true)
                        try handleBoundary(match)
                        previousHeaderEnding = ending
                        if mode == .headers { return position }
                    } else {
                        try emitUndecidedLine()
                        pendingLineEnding = ending
                        atLineStart = true
                    }
                    continue
                }
            } else if atLineStart {
                if bytes[position] == 0x2D {
                    lineBuffer.append(0x2D)
                    position += 1
                    continue
                }
                try emitPendingLineEnding()
                atLineStart = false
            }
            // Inside a line that is content: take every following line that cannot be a boundary
            // (it does not start with `-`) in one run.
            let runStart = position
            while true {
                guard let found = docroute_find_byte(bytes + position, 0x0A, count - position) else {
                    var end = count
                    if bytes[count - 1] == 0x0D {
                        heldCR = true
                        end -= 1
                    }
                    try emitContent(UnsafeRawBufferPointer(rebasing: chunk[runStart..<end]))
                    return count
                }
                let newline = UnsafeRawPointer(found) - UnsafeRawPointer(bytes)
                let next = newline + 1
                if next < count, bytes[next] != 0x2D {
                    position = next
                    continue
                }
                var end = newline
                var ending = LineEnding.lf
                if newline > runStart, bytes[newline - 1] == 0x0D {
                    end -= 1
                    ending = .crlf
                }
                try emitContent(UnsafeRawBufferPointer(rebasing: chunk[runStart..<end]))
                pendingLineEnding = ending
                atLineStart = true
                position = next
                break
            }
        }
        return count
    }

    /// The collected line was not a boundary: it is content, after the break held before it.
    mutating func emitUndecidedLine() throws {
        try emitPendingLineEnding()
        var line: [UInt8] = []
        swap(&line, &lineBuffer)
        defer {
            line.removeAll(keepingCapacity: true)
            swap(&line, &lineBuffer)
        }
        try emitContent(line[...])
    }

    mutating func emitPendingLineEnding() throws {
        switch pendingLineEnding {
        case .none: return
        case .lf: try emitContent(Self.lineFeed)
        case .crlf: try emitContent(Self.carriageReturnLineFeed)
        }
        pendingLineEnding = .none
    }

    static var carriageReturnLineFeed: UnsafeRawBufferPointer { bytes(of: "\r\n") }
    static var carriageReturn: UnsafeRawBufferPointer { bytes(of: "\r") }
    static var lineFeed: UnsafeRawBufferPointer { bytes(of: "\n") }

    /// The bytes of a string literal, which live in the program's constant data for as long as it
    /// runs: no allocation, nothing shared that could change.
    static func bytes(of literal: StaticString) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
    }

    /// The open multipart whose boundary `line` is (innermost first), and whether it closes it.
    func matchBoundary(_ line: ArraySlice<UInt8>) -> (index: Int, isClose: Bool)? {
        guard line.count >= 3, line.first == 0x2D, line[line.startIndex + 1] == 0x2D else { return nil }
        let afterDashes = line.startIndex + 2
        for index in frames.indices.reversed() {
            let boundary = frames[index].boundary
            guard line.count - 2 >= boundary.count,
                  line[afterDashes..<(afterDashes + boundary.count)].elementsEqual(boundary) else { continue }
            var rest = line[(afterDashes + boundary.count)...]
            var isClose = false
            if rest.count >= 2, rest.first == 0x2D, rest[rest.startIndex + 1] == 0x2D {
                isClose = true
                rest = rest.dropFirst(2)
            }
            if rest.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return (index, isClose) }
        }
        return nil
    }

    mutating func updateBoundaryLineLimit() {
        // "--", the boundary, "--", transport padding, CR.
        boundaryLineLimit = 2 + (frames.map(\.boundary.count).max() ?? 0) + 2 + 64 + 1
    }

    mutating func record(_ code: MailProblem.Code, _ partPath: String, _ message: String) {
        guard problems.count < limits.maximumProblems else { return }
        problems.append(MailProblem(code: code, partPath: partPath, message: message))
    }

    // MARK: End of input

    mutating func finishInput() throws {
        if byteCount == 0 {
            record(.emptyInput, "", "the message is empty")
            return
        }
        if mode == .body, !skippingRest, !lineBuffer.isEmpty {
            // A last line without a break: most often the closing boundary.
            if let match = matchBoundary(lineBuffer[...]) {
                boundaryLineStart = byteCount - Int64(lineBuffer.count)
                lineBuffer.removeAll()
                try handleBoundary(match)
            } else {
                try emitUndecidedLine()
            }
        }
        if mode == .headers, !lineBuffer.isEmpty {
            var line: [UInt8] = []
            swap(&line, &lineBuffer)
            if line.last == 0x0D { line.removeLast() }
            headerLineEnd = byteCount
            try processHeaderLine(line[...], ending: .none)
        }
        bodyStart = byteCount
        for _ in 0..<4 where mode == .headers {
            try endHeader()
        }
        // An attached message still open runs to the end of the input; inside a multipart that never
        // closed, the line break held back before the missing boundary is not its.
        let messageEnd = frames.isEmpty || mode == .headers ? byteCount : byteCount - Int64(pendingLineEnding.count) - (heldCR ? 1 : 0)
        if heldCR {
            heldCR = false
            if frames.isEmpty { try emitContent(Self.carriageReturn) }
        }
        if frames.isEmpty { try emitPendingLineEnding() }
        try endLeaf(extraDamage: frames.isEmpty ? [] : .unterminated)
        try closeAttachedMessages(outside: -1, end: messageEnd)
        for frame in frames.reversed() {
            record(.unterminatedMultipart, frame.prefix, "the multipart\(frame.prefix.isEmpty ? "" : " at part \(frame.prefix)") has no closing boundary; its last part ran to the end of the message")
        }
        frames = []
    }
}

extension MailParser.LineEnding {
    var count: Int { Int(rawValue) }
}
