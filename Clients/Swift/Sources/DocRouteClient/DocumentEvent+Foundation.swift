import Foundation

extension DocumentEvent {
    /// The URL as a Foundation `URL`, or `nil` if Foundation cannot parse it.
    public var url: URL? { URL(string: urlString) }

    /// The raw bytes of the file's path in the handler's sandbox; `nil` for a custom-scheme URL.
    public var filePathBytes: [UInt8]? {
        guard isFileURL else { return nil }
        return try? FileURL.path(fromURLString: urlString)
    }

    /// The file's path as text; `nil` for a custom-scheme URL or a name that is not UTF-8
    /// (use ``filePathBytes`` for those).
    public var filePath: String? {
        filePathBytes.flatMap { String(validating: $0, as: UTF8.self) }
    }
}
