extension MailParser {
    /// The entity whose header is being read: the message, a part of a multipart, or a forwarded
    /// message inside a `message/rfc822` part.
    struct EntityTarget {
        /// For a part, its path (`2.1`); for a message, the prefix of its parts (empty for the message
        /// itself, the `message/rfc822` part's path for a forwarded one).
        var path: String
        /// Nesting: 0 for the message, one more for each multipart part and each forwarded message.
        var depth: Int
        /// A message (its header has From, Subject…; its body is numbered below ``path``) rather than a part.
        var isMessage: Bool
        /// The type when the header has no Content-Type: `message/rfc822` in a multipart/digest.
        var defaultType: String
        /// How many multiparts were open when the entity began: its own boundary is the last of them.
        var frameCount: Int
        /// The envelope of the innermost forwarded message holding the entity; nil in the outer message.
        var envelope: MailEnvelope?
    }

    /// One open multipart.
    struct Frame {
        var boundary: [UInt8]
        /// The path its parts are numbered below.
        var prefix: String
        var depth: Int
        var childCount = 0
        var isDigest: Bool
        /// The innermost forwarded message's envelope, for its parts.
        var envelope: MailEnvelope?
    }

    enum TransferEncoding {
        case identity, base64, quotedPrintable
    }

    /// An attached message (`message/rfc822` part) whose bytes are running.
    struct OpenMessage {
        /// Its record in ``MailParser/attachments``.
        var recordIndex: Int
        /// How many multiparts were open when its part began: a boundary of one of them ends it.
        var frameCount: Int
        /// Where its bytes start (just after its part's header).
        var start: Int64
        /// The depth of the message inside, whose header gives the subject.
        var innerDepth: Int
        /// That message's subject, once its header is read (a name for a part that gives none).
        var subject: String?
        var headerSeen = false
    }

    /// The wanted attachment being decoded (its decoding state is in the parser itself).
    struct Leaf {
        var info: MailAttachmentInfo
        var recordIndex: Int
        var frameCount: Int
    }

    static func join(_ prefix: String, _ number: Int) -> String {
        prefix.isEmpty ? String(number) : prefix + "." + String(number)
    }

    /// The header of ``target`` ended: decide what its body is.
    mutating func endHeader() throws {
        header.commit()
        let section = header
        header = MailHeaderSection()
        let entity = target
        mode = .body
        atLineStart = true
        pendingLineEnding = .none
        leaf = nil
        decoding = nil

        var contentEnvelope = entity.envelope
        if entity.isMessage {
            if entity.depth == 0 {
                envelope = section.envelope
                isMIME = section.isMIME
                guard section.fieldCount > 0 else {
                    noHeader()
                    return
                }
                // Not MIME: a plain text mail, nothing in it is an attachment.
                guard isMIME else {
                    skipRest()
                    return
                }
            } else {
                contentEnvelope = section.envelope
                if let last = openMessages.indices.last, !openMessages[last].headerSeen, openMessages[last].innerDepth == entity.depth {
                    openMessages[last].headerSeen = true
                    openMessages[last].subject = section.envelope.subject
                }
            }
        }
        if entity.depth > limits.maximumDepth {
            record(.tooDeep, entity.path, "parts nested deeper than \(limits.maximumDepth) levels were skipped")
            return
        }

        let contentType = section.contentType.map { MIMEHeaderValue(parsing: $0) }
        let mediaType = contentType?.mediaType.map { "\($0.type)/\($0.subtype)" }
        let structuralType = mediaType ?? (section.contentType == nil ? entity.defaultType : "application/octet-stream")
        let transferEncoding = section.contentTransferEncoding.map { MIMEHeaderValue(parsing: $0).value } ?? "7bit"

        if structuralType.hasPrefix("multipart/") {
            guard let boundary = contentType?.parameters.raw.first(where: { $0.name == "boundary" })?.value,
                  !boundary.isEmpty, boundary.count <= limits.maximumBoundaryLength,
                  !boundary.contains(0x0A), !boundary.contains(0x0D) else {
                record(.missingBoundary, entity.path, "a \(structuralType) without a usable boundary parameter; its content was skipped")
                return
            }
            frames.append(Frame(
                boundary: boundary, prefix: entity.path, depth: entity.depth,
                isDigest: structuralType == "multipart/digest", envelope: contentEnvelope
            ))
            updateBoundaryLineLimit()
            return
        }
        let isEncoded = transferEncoding == "base64" || transferEncoding == "quoted-printable"
        if Self.isMessageType(structuralType), !isEncoded {
            try beginAttachedMessage(
                path: entity.isMessage ? Self.join(entity.path, 1) : entity.path, mimeType: structuralType,
                contentType: contentType, section: section, transferEncoding: transferEncoding,
                frameCount: entity.frameCount, innerDepth: entity.depth + 1, enclosingMessage: contentEnvelope
            )
            target = EntityTarget(
                path: entity.isMessage ? Self.join(entity.path, 1) : entity.path,
                depth: entity.depth + 1, isMessage: true, defaultType: "text/plain",
                frameCount: entity.frameCount, envelope: contentEnvelope
            )
            mode = .headers
            return
        }
        try beginLeaf(
            path: entity.isMessage ? Self.join(entity.path, 1) : entity.path,
            mimeType: section.contentType == nil ? entity.defaultType : (mediaType ?? "application/octet-stream"),
            contentType: contentType, section: section, transferEncoding: transferEncoding,
            frameCount: entity.frameCount, enclosingMessage: contentEnvelope
        )
    }

    /// A leaf part begins: an attachment if it is marked as one or has a file name.
    mutating func beginLeaf(
        path: String, mimeType: String, contentType: MIMEHeaderValue?, section: MailHeaderSection,
        transferEncoding: String, frameCount: Int, enclosingMessage: MailEnvelope?
    ) throws {
        let disposition = section.contentDisposition.map { MIMEHeaderValue(parsing: $0) }
        let name = Self.fileName(disposition: disposition, contentType: contentType)
        let kind = Self.kind(of: disposition)
        // A forwarded message in base64 or quoted-printable is an attached message all the same.
        let isMessage = Self.isMessageType(mimeType)
        guard kind == .attachment || name != nil || isMessage else { return }
        let info = MailAttachmentInfo(
            partPath: path,
            fileName: isMessage ? AttachmentFileName.forMessage(name: name, subject: nil) : AttachmentFileName.sanitize(name ?? ""),
            originalFileName: name,
            mimeType: mimeType, disposition: kind, transferEncoding: transferEncoding,
            message: envelope, enclosingMessage: enclosingMessage, mimeTypeIsDefault: section.contentType == nil
        )
        let wanted = try sink.beginAttachment(info)
        attachments.append(MailAttachmentRecord(info: info, wanted: wanted, size: 0, damage: []))
        guard wanted else { return }
        let encoding: TransferEncoding = switch transferEncoding {
        case "base64": .base64
        case "quoted-printable": .quotedPrintable
        default: .identity
        }
        leaf = Leaf(info: info, recordIndex: attachments.count - 1, frameCount: frameCount)
        decoding = encoding
        base64 = Base64StreamDecoder()
        quotedPrintable = QuotedPrintableStreamDecoder()
        decodedSize = 0
    }

    static func isMessageType(_ mimeType: String) -> Bool {
        mimeType == "message/rfc822" || mimeType == "message/global"
    }

    /// The part's file name: Content-Disposition's `filename`, else Content-Type's `name` (as mail
    /// clients and Python's `get_filename` look); nil when neither gives one.
    static func fileName(disposition: MIMEHeaderValue?, contentType: MIMEHeaderValue?) -> String? {
        var name = disposition?.parameters.text(for: "filename")
        if name?.isEmpty ?? true { name = contentType?.parameters.text(for: "name") }
        return name?.isEmpty ?? true ? nil : name
    }

    static func kind(of disposition: MIMEHeaderValue?) -> MailAttachmentInfo.Disposition {
        switch disposition?.value {
        case "attachment": .attachment
        case "inline": .inline
        default: .unspecified
        }
    }

    /// A `message/rfc822` part begins (not encoded: its body is a message, parsed next). Every
    /// such part is an attachment, as mail clients list it, whatever its disposition; its bytes are
    /// located, not decoded, and handed over when it ends (``closeAttachedMessages(outside:end:)``).
    mutating func beginAttachedMessage(
        path: String, mimeType: String, contentType: MIMEHeaderValue?, section: MailHeaderSection,
        transferEncoding: String, frameCount: Int, innerDepth: Int, enclosingMessage: MailEnvelope?
    ) throws {
        let disposition = section.contentDisposition.map { MIMEHeaderValue(parsing: $0) }
        let name = Self.fileName(disposition: disposition, contentType: contentType)
        let info = MailAttachmentInfo(
            partPath: path, fileName: AttachmentFileName.forMessage(name: name, subject: nil), originalFileName: name,
            mimeType: mimeType, disposition: Self.kind(of: disposition), transferEncoding: transferEncoding,
            message: envelope, enclosingMessage: enclosingMessage
        )
        attachments.append(MailAttachmentRecord(info: info, wanted: false, size: 0, damage: []))
        openMessages.append(OpenMessage(recordIndex: attachments.count - 1, frameCount: frameCount, start: bodyStart, innerDepth: innerDepth))
    }

    /// Ends the attached messages that a boundary of the multipart at `index` ends (-1: the end of
    /// the input ends them all): their bytes run to `end`. One ended by an outer boundary, or by
    /// the end of the input inside a multipart, was not closed by its own boundary: `unterminated`.
    mutating func closeAttachedMessages(outside index: Int, end: Int64) throws {
        while let open = openMessages.last, open.frameCount > index {
            openMessages.removeLast()
            let range = open.start..<max(open.start, end)
            let damage: AttachmentDamage = open.frameCount > index + 1 ? .unterminated : []
            var info = attachments[open.recordIndex].info
            if info.originalFileName == nil {
                info.fileName = AttachmentFileName.forMessage(name: nil, subject: open.subject)
            }
            attachments[open.recordIndex].info = info
            attachments[open.recordIndex].size = Int64(range.count)
            attachments[open.recordIndex].damage = damage
            attachments[open.recordIndex].byteRange = range
            attachments[open.recordIndex].wanted = try sink.attachedMessage(info, bytes: range, damage: damage)
        }
    }

    /// The current attachment's bytes are over: flush its decoder and tell the sink.
    mutating func endLeaf(extraDamage: AttachmentDamage) throws {
        guard let finished = leaf, let encoding = decoding else { return }
        var damage = extraDamage
        if outputCount + 4 > output.capacity { try flushOutput() }
        let destination = output.base + outputCount
        switch encoding {
        case .identity:
            break
        case .base64:
            let ending = base64.finish(into: destination)
            outputCount += ending.produced
            decodedSize += Int64(ending.produced)
            if base64.leftoverIsUnusable {
                damage.insert(.truncatedEncoding)
            } else if ending.unpadded {
                // Padding missing at the end of a part that was closed properly: a sloppy encoder,
                // every byte is there. In a part cut short, the missing padding is the cut.
                damage.insert(extraDamage.contains(.unterminated) ? .truncatedEncoding : .badPadding)
            }
            if base64.invalidCharacters > 0 { damage.insert(.invalidCharacters) }
        case .quotedPrintable:
            let produced = quotedPrintable.finish(into: destination)
            outputCount += produced
            decodedSize += Int64(produced)
        }
        try flushOutput()
        leaf = nil
        decoding = nil
        attachments[finished.recordIndex].size = decodedSize
        attachments[finished.recordIndex].damage = damage
        if damage.contains(.truncatedEncoding) {
            record(.truncatedEncoding, finished.info.partPath, "the base64 of \(finished.info.fileName) is cut short; bytes are missing")
        }
        if damage.contains(.badPadding) {
            record(.badPadding, finished.info.partPath, "the base64 of \(finished.info.fileName) lacks its final padding; every byte was decoded")
        }
        try sink.endAttachment(finished.info, size: decodedSize, damage: damage)
    }

    /// A boundary line of the open multipart at `index` (closing it when `isClose`).
    mutating func handleBoundary(_ match: (index: Int, isClose: Bool)) throws {
        // The line break before a boundary line belongs to the boundary (RFC 2046).
        let contentEnd = boundaryLineStart - Int64(mode == .headers ? previousHeaderEnding.count : pendingLineEnding.count)
        if mode == .headers {
            // A forwarded message cut inside its header still names its .eml after its subject.
            if target.isMessage, let last = openMessages.indices.last, !openMessages[last].headerSeen,
               openMessages[last].innerDepth == target.depth {
                header.commit()
                openMessages[last].headerSeen = true
                openMessages[last].subject = header.envelope.subject
            }
            header = MailHeaderSection()
        }
        let ownBoundary = leaf.map { $0.frameCount == match.index + 1 } ?? true
        try endLeaf(extraDamage: ownBoundary ? [] : .unterminated)
        try closeAttachedMessages(outside: match.index, end: contentEnd)
        if match.index + 1 < frames.count {
            for frame in frames[(match.index + 1)...].reversed() {
                record(.unterminatedMultipart, frame.prefix, "the multipart at part \(frame.prefix) has no closing boundary; an outer boundary ended it")
            }
            frames.removeSubrange((match.index + 1)...)
        }
        mode = .body
        atLineStart = true
        pendingLineEnding = .none
        heldCR = false
        if match.isClose {
            frames.removeLast()
        } else {
            frames[match.index].childCount += 1
            partCount += 1
            let frame = frames[match.index]
            if partCount == limits.maximumParts + 1 {
                record(.tooManyParts, frame.prefix, "more than \(limits.maximumParts) parts; the rest were skipped")
            }
            if partCount <= limits.maximumParts {
                target = EntityTarget(
                    path: Self.join(frame.prefix, frame.childCount), depth: frame.depth + 1, isMessage: false,
                    defaultType: frame.isDigest ? "message/rfc822" : "text/plain",
                    frameCount: match.index + 1, envelope: frame.envelope
                )
                mode = .headers
            }
        }
        updateBoundaryLineLimit()
    }
}
