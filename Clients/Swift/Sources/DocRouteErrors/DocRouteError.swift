/// The one shape of docroute's errors: a stable ``code``, a ``message`` that says what happened and
/// what to do, the lower-level ``cause`` (an `Errno` when a system call failed) and the
/// ``location`` in docroute's source that raised it.
///
/// Each domain names its own: `typealias DeliveryError = DocRouteError<DeliveryErrorCode>`, with
/// the codes, the text (``ErrorCodeProtocol/describe(_:)``) and any helpers kept beside its `Code`.
/// Match on ``code``, never on ``message``.
///
/// Problems found in a user's own file (a manifest, the configuration, a mail) say where in it:
/// ``inputFile``, ``inputLine`` and ``inputKey``.
public struct DocRouteError<DomainCode: ErrorCodeProtocol>: Error, Sendable, CustomStringConvertible {
    /// The domain's code type, e.g. `DeliveryError.Code`.
    public typealias Code = DomainCode

    /// What went wrong; stable across releases.
    public var code: Code
    /// What happened and what to do about it, for people.
    public var message: String
    /// The user's file the problem is in (a manifest, the configuration file), when there is one.
    public var inputFile: String?
    /// The 1-based line in ``inputFile``, when the problem is on one line.
    public var inputLine: Int?
    /// Where inside the input: a property-list key path (`UTExportedTypeDeclarations[0]`), a
    /// configuration key (`inbox.path`), a MIME part (`2.1`).
    public var inputKey: String?
    /// The `id` of the protocol request this error answers, when it could be read.
    public var requestID: String?
    /// The lower-level error that led to this one (an `Errno`, a database error), if any.
    public var cause: (any Error & Sendable)?
    /// Where in docroute's source the error was raised.
    public var location: SourceLocation

    /// Creates an error; the source location defaults to the caller's.
    public init(
        code: Code,
        inputFile: String? = nil,
        inputLine: Int? = nil,
        inputKey: String? = nil,
        message: String,
        requestID: String? = nil,
        cause: (any Error & Sendable)? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.inputFile = inputFile
        self.inputLine = inputLine
        self.inputKey = inputKey
        self.requestID = requestID
        self.cause = cause
        self.location = SourceLocation(file: file, line: line)
    }

    /// The domain's text: see ``ErrorCodeProtocol/describe(_:)``.
    public var description: String { Code.describe(self) }
}

extension DocRouteError: Hashable {
    /// Equal when they say the same thing about the same place: the ``cause`` (not always
    /// comparable) and the ``location`` (where docroute noticed) are left out.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.inputFile == rhs.inputFile
            && lhs.inputLine == rhs.inputLine && lhs.inputKey == rhs.inputKey && lhs.requestID == rhs.requestID
    }

    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(inputFile)
        hasher.combine(inputLine)
        hasher.combine(inputKey)
        hasher.combine(requestID)
    }
}
