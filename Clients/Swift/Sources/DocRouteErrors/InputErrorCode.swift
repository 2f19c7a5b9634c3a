/// The codes shared by every domain of problems in a file a person wrote (the configuration, a
/// handler's manifest, a handler's type declarations): the same problem has the same code, and
/// the same meaning, wherever it is found, so it is declared once, here. A domain conforms and
/// declares beside these only the codes of its own.
///
/// ``init(rawValue:)`` builds a code from its text: the shared codes below are made by it, and
/// so are a domain's own.
public protocol InputErrorCode: ErrorCodeProtocol {
    /// The code whose stable text is `rawValue`.
    init(rawValue: String)
}

extension InputErrorCode {
    /// The file cannot be read.
    public static var unreadable: Self { Self(rawValue: "unreadable") }
    /// A key holds a value of another type than it must.
    public static var wrongType: Self { Self(rawValue: "wrong-type") }
    /// A key that must be there is not.
    public static var missingKey: Self { Self(rawValue: "missing-key") }
    /// A key's value, or a declaration's, cannot be used.
    public static var invalidValue: Self { Self(rawValue: "invalid-value") }
}
