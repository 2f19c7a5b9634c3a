import DocRouteErrors

/// The `code` of an `error` message, as listed in PROTOCOL.md's error table.
///
/// A struct over a private enum, so that a code a newer daemon sends decodes, compares and encodes
/// again as its own text (``isKnown`` is then false), and adding a code breaks no `switch`.
/// ``rawValue`` is the exact string on the wire.
public struct ErrorCode: ErrorCodeProtocol, Codable {
    private enum Known: String, CaseIterable {
        case badRequest = "bad-request"
        case unsupportedProtocol = "unsupported-protocol"
        case unknownHandler = "unknown-handler"
        case notPermitted = "not-permitted"
        case alreadySubscribed = "already-subscribed"
        case noHandler = "no-handler"
        case notFound = "not-found"
        case tooManyConnections = "too-many-connections"
        case overLimit = "over-limit"
        case `internal` = "internal"
    }

    /// The code's text on the wire.
    public let rawValue: String

    /// Any code, including one this library does not know.
    public init(rawValue: String) { self.rawValue = rawValue }

    private init(_ known: Known) { rawValue = known.rawValue }

    /// Whether the code is one of PROTOCOL.md's table (rather than one of a newer daemon).
    public var isKnown: Bool { Known(rawValue: rawValue) != nil }

    /// The codes of PROTOCOL.md's error table, in its order.
    public static var allCases: [ErrorCode] { Known.allCases.map(ErrorCode.init) }

    /// Not JSON, no `type`, a missing or mistyped field, or a line over 1 MiB.
    public static let badRequest = ErrorCode(.badRequest)
    /// `protocol` in `hello` is not one the daemon speaks.
    public static let unsupportedProtocol = ErrorCode(.unsupportedProtocol)
    /// No registered handler has that bundle identifier.
    public static let unknownHandler = ErrorCode(.unknownHandler)
    /// The peer's uid may not do this.
    public static let notPermitted = ErrorCode(.notPermitted)
    /// Another live connection is subscribed as that handler.
    public static let alreadySubscribed = ErrorCode(.alreadySubscribed)
    /// `open`: nothing claims that URL scheme or content type.
    public static let noHandler = ErrorCode(.noHandler)
    /// `open`: the file does not exist; `ack`: unknown delivery.
    public static let notFound = ErrorCode(.notFound)
    /// The connection is refused: too many are open in all, from this uid, or only handlers may
    /// take the ones left. It is closed after this line.
    public static let tooManyConnections = ErrorCode(.tooManyConnections)
    /// `open`: refused for now, the request is over a limit that frees with time: the uid's
    /// budget of requests or bytes per minute, or what the handler or the uid may have waiting
    /// unacknowledged. The message names the limit and says when to try again.
    public static let overLimit = ErrorCode(.overLimit)
    /// The daemon failed; the message says what.
    public static let `internal` = ErrorCode(.internal)

    /// What a user should do about an error with this code, for a client to show beside the
    /// daemon's message; nil when the message says it all.
    public var advice: String? {
        switch Known(rawValue: rawValue) {
        case .overLimit?:
            "Nothing was delivered; send it again later: the message names the limit (a key of docroute.toml) and, for a budget per minute, when there is room again. What waits for a handler makes room as the handler acknowledges it."
        default:
            nil
        }
    }

    /// Reads the code's text, known or not.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    /// Writes the code's text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
