/// A failure to read, write or honour a protocol message.
///
/// `code` is what goes on the wire in an `error` message; `requestID` is the `id` of the
/// request that failed, when one could be read, so the daemon can echo it.
public struct ProtocolError: Error, Sendable, CustomStringConvertible {
    /// The stable error code, as sent in an `error` message.
    public var code: ErrorCode
    /// Human-readable text saying what was wrong and, where it helps, what to do.
    public var message: String
    /// The `id` of the request this error answers, if it could be read.
    public var requestID: String?
    /// A lower-level error that caused this one, if any.
    public var cause: (any Error)?
    /// Where in the source the error was created.
    public var file: String
    /// Where in the source the error was created.
    public var line: Int

    /// Creates an error with the given wire code and message.
    public init(
        code: ErrorCode,
        message: String,
        requestID: String? = nil,
        cause: (any Error)? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.requestID = requestID
        self.cause = cause
        self.file = file
        self.line = line
    }

    /// A `bad-request` error.
    public static func badRequest(
        _ message: String,
        requestID: String? = nil,
        cause: (any Error)? = nil,
        file: String = #fileID,
        line: Int = #line
    ) -> ProtocolError {
        ProtocolError(code: .badRequest, message: message, requestID: requestID, cause: cause, file: file, line: line)
    }

    /// The `bad-request` error for a line longer than the protocol allows.
    public static func lineTooLong(
        maximumLineLength: Int = WireProtocol.maximumLineLength,
        file: String = #fileID,
        line: Int = #line
    ) -> ProtocolError {
        .badRequest(
            "line longer than \(maximumLineLength) bytes; a message must fit on one line of at most 1 MiB",
            file: file, line: line)
    }

    /// `code: message`, plus the request id when known.
    public var description: String {
        var text = "\(code.rawValue): \(message)"
        if let requestID { text += " (request id \"\(requestID)\")" }
        if let cause { text += " [cause: \(cause)]" }
        return text
    }
}
