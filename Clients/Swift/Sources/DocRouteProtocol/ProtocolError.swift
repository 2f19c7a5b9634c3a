import DocRouteErrors

/// A failure to read, write or honour a protocol message.
///
/// `code` is what goes on the wire in an `error` message; `requestID` is the `id` of the
/// request that failed, when one could be read, so the daemon can echo it.
public typealias ProtocolError = DocRouteError<ErrorCode>

extension ErrorCode {
    /// `code: message`, plus the request id when known and the cause.
    public static func describe(_ error: ProtocolError) -> String {
        var text = "\(error.code.rawValue): \(error.message)"
        if let requestID = error.requestID { text += " (request id \"\(requestID)\")" }
        if let cause = error.cause { text += " [cause: \(cause)]" }
        return text
    }
}

extension DocRouteError where Code == ErrorCode {
    /// A `bad-request` error.
    public static func badRequest(
        _ message: String,
        requestID: String? = nil,
        cause: (any Error & Sendable)? = nil,
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
}
