import DocRouteErrors

/// Stable codes of ``AdminDefaultsStore/StoreError``.
public struct AdminDefaultsStoreErrorCode: ErrorCodeProtocol {
    /// The code's text, e.g. `defaults-invalid`.
    public let rawValue: String
    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// `defaults.json` exists but cannot be read.
    public static let unreadable = Self("defaults-unreadable")
    /// `defaults.json` is not a defaults file.
    public static let invalid = Self("defaults-invalid")
    /// The defaults could not be written.
    public static let writeFailed = Self("defaults-write-failed")

    /// `file: message`.
    public static func describe(_ error: AdminDefaultsStore.StoreError) -> String {
        "\(error.inputFile ?? ""): \(error.message)"
    }
}
