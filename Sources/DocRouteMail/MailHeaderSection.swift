/// The fields of one header section that parsing needs, collected line by line.
///
/// Only the fields read later are kept (the first occurrence of each); the others are counted and
/// dropped, so a section costs at most its size limit.
struct MailHeaderSection {
    enum Field {
        case contentType, contentDisposition, contentTransferEncoding, mimeVersion
        case from, subject, messageID, date
    }

    /// Bytes of the section so far, line breaks included.
    var byteCount = 0
    /// Fields started so far, kept or not.
    var fieldCount = 0
    var contentType: [UInt8]?
    var contentDisposition: [UInt8]?
    var contentTransferEncoding: [UInt8]?
    var mimeVersion: [UInt8]?
    var from: [UInt8]?
    var subject: [UInt8]?
    var messageID: [UInt8]?
    var date: [UInt8]?

    private var current: Field?
    private var currentValue: [UInt8] = []

    /// Starts a field from a line `name: value`; false when the line is not a header field.
    mutating func startField(_ line: ArraySlice<UInt8>) -> Bool {
        guard let colon = line.firstIndex(of: 0x3A) else { return false }
        var nameEnd = colon
        while nameEnd > line.startIndex, line[nameEnd - 1] == 0x20 || line[nameEnd - 1] == 0x09 { nameEnd -= 1 }
        let name = line[line.startIndex..<nameEnd]
        guard !name.isEmpty, name.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return false }
        commit()
        fieldCount += 1
        current = Self.field(named: name)
        if current != nil { currentValue = Array(line[(colon + 1)...]) }
        return true
    }

    /// Adds a folded continuation line (starting with a space or tab) to the current field.
    mutating func continueField(_ line: ArraySlice<UInt8>) {
        if current != nil { currentValue += line }
    }

    /// Stores the field in progress, if it is one that is kept and the first of its name.
    mutating func commit() {
        guard let field = current else { return }
        let value = currentValue
        current = nil
        currentValue = []
        switch field {
        case .contentType: if contentType == nil { contentType = value }
        case .contentDisposition: if contentDisposition == nil { contentDisposition = value }
        case .contentTransferEncoding: if contentTransferEncoding == nil { contentTransferEncoding = value }
        case .mimeVersion: if mimeVersion == nil { mimeVersion = value }
        case .from: if from == nil { from = value }
        case .subject: if subject == nil { subject = value }
        case .messageID: if messageID == nil { messageID = value }
        case .date: if date == nil { date = value }
        }
    }

    /// Whether the section declares MIME content.
    var isMIME: Bool { mimeVersion != nil || contentType != nil || contentTransferEncoding != nil }

    /// The envelope fields, decoded.
    var envelope: MailEnvelope {
        MailEnvelope(
            from: from.map { Self.trimmed(EncodedWords.decode($0)) },
            subject: subject.map { Self.trimmed(EncodedWords.decode($0)) },
            messageID: messageID.map { Self.trimmed(MailCharset.decodeUnlabelled($0)) },
            date: date.map { Self.trimmed(MailCharset.decodeUnlabelled($0)) }
        )
    }

    static func trimmed(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }

    static func field(named name: ArraySlice<UInt8>) -> Field? {
        let known: [(StaticString, Field)] = [
            ("from", .from), ("date", .date), ("subject", .subject), ("message-id", .messageID),
            ("content-type", .contentType), ("mime-version", .mimeVersion),
            ("content-disposition", .contentDisposition), ("content-transfer-encoding", .contentTransferEncoding),
        ]
        return known.first { matches(name, $0.0) }?.1
    }

    static func matches(_ name: ArraySlice<UInt8>, _ lowercase: StaticString) -> Bool {
        guard name.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        return zip(name, expected).allSatisfy { MIMEHeaderValue.lowercase($0) == $1 }
    }
}
