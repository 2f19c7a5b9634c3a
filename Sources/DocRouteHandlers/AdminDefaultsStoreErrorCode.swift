import DocRouteErrors

/// Stable codes of ``AdminDefaultsStore/StoreError``.
public struct AdminDefaultsStoreErrorCode: ErrorCodeProtocol {
    private enum Known: String {
        case unreadable = "defaults-unreadable"
        case invalid = "defaults-invalid"
        case writeFailed = "defaults-write-failed"
    }

    private let known: Known
    private init(_ known: Known) { self.known = known }
    /// The code's text, e.g. `defaults-invalid`.
    public var rawValue: String { known.rawValue }

    /// `defaults.json` exists but cannot be read.
    public static let unreadable = Self(.unreadable)
    /// `defaults.json` is not a defaults file.
    public static let invalid = Self(.invalid)
    /// The defaults could not be written.
    public static let writeFailed = Self(.writeFailed)

    /// `file: message`.
    public static func describe(_ error: AdminDefaultsStore.StoreError) -> String {
        "\(error.inputFile ?? ""): \(error.message)"
    }
}
