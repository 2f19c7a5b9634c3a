/// What every domain's error `Code` is: a struct over a private enum (as swift-service-lifecycle's
/// `ServiceGroupError.Code`), so adding a code breaks no caller's `switch`, while `case .noSpace:`
/// still matches through `Equatable`.
///
/// ``rawValue`` is the stable text that goes on the wire, into logs and into metrics; it never
/// changes once released.
public protocol ErrorCodeProtocol: Hashable, Sendable, CustomStringConvertible {
    /// The stable text, e.g. `no-space`.
    var rawValue: String { get }

    /// How an error with a code of this domain reads, for people and logs. The default is
    /// `code: message`, then the cause.
    static func describe(_ error: DocRouteError<Self>) -> String
}

extension ErrorCodeProtocol {
    /// The stable text.
    public var description: String { rawValue }

    /// `code: message`, then `(cause: …)` when there is a cause.
    public static func describe(_ error: DocRouteError<Self>) -> String {
        var text = "\(error.code.rawValue): \(error.message)"
        if let cause = error.cause { text += " (cause: \(cause))" }
        return text
    }
}
