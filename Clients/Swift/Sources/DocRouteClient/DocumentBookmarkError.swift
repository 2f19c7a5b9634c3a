import DocRouteErrors

/// Why a bookmark could not be made or resolved; `description` is `code: message`.
public typealias DocumentBookmarkError = DocRouteError<DocumentBookmarkErrorCode>

/// Stable codes of ``DocumentBookmarkError``, for programs to switch on.
public struct DocumentBookmarkErrorCode: ErrorCodeProtocol {
    /// The code's text, e.g. `not-found`.
    public let rawValue: String
    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// The file is not inside a container (no `Documents` folder above it, or not below the container given).
    public static let notInContainer = Self("not-in-container")
    /// The bookmark was made in another container than the one it is resolved in.
    public static let otherContainer = Self("other-container")
    /// The document is gone: not at its path, and nowhere in the container.
    public static let notFound = Self("not-found")
    /// A symbolic link stands where the document or a folder of its path was; never followed.
    public static let symbolicLink = Self("symbolic-link")
    /// The data is not a bookmark, or of a version this library does not read.
    public static let invalidData = Self("invalid-data")
    /// The file or the container cannot be read.
    public static let unreadable = Self("unreadable")
}

extension DocRouteError where Code == DocumentBookmarkErrorCode {
    /// Creates an error: what kind, and what went wrong and what to do.
    public init(_ code: Code, _ message: String, file: String = #fileID, line: Int = #line) {
        self.init(code: code, message: message, file: file, line: line)
    }
}
