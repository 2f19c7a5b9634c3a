/// Why a bookmark could not be made or resolved.
public struct DocumentBookmarkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable codes, for programs to switch on.
    public enum Code: String, Sendable, Hashable {
        /// The file is not inside a container (no `Documents` folder above it, or not below the container given).
        case notInContainer = "not-in-container"
        /// The bookmark was made in another container than the one it is resolved in.
        case otherContainer = "other-container"
        /// The document is gone: not at its path, and nowhere in the container.
        case notFound = "not-found"
        /// A symbolic link stands where the document or a folder of its path was; never followed.
        case symbolicLink = "symbolic-link"
        /// The data is not a bookmark, or of a version this library does not read.
        case invalidData = "invalid-data"
        /// The file or the container cannot be read.
        case unreadable
    }

    /// What kind of failure.
    public var code: Code
    /// What went wrong and what to do.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }
}
