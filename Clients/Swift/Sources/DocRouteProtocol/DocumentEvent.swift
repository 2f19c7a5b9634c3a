/// One document (or custom-scheme URL) owed to a handler: what a `launch` or `openURL`
/// message carries.
public struct DocumentEvent: Sendable, Hashable {
    /// Identifies the delivery; it never changes, so a handler can drop duplicates.
    public var deliveryID: String
    /// The absolute URL (RFC 3986): `file://` plus the percent-encoded path of the copy in the
    /// handler's sandbox, or a custom-scheme URL exactly as it was opened.
    public var urlString: String
    /// Whether ``urlString`` is a file URL (the seed's `[url isFileURL]`).
    public var isFileURL: Bool
    /// The file's Uniform Type Identifier; `nil` for custom-scheme URLs.
    public var contentType: String?
    /// The mailbox the file arrived in; `nil` for custom-scheme URLs.
    public var mailbox: String?
    /// The bundle identifier of the application the document came from, if known.
    public var sourceApplication: String?
    /// Property-list data about the document (for an inbox file at least `mailbox`,
    /// `originalFilename` and `size`).
    public var annotation: [String: PropertyListValue]

    /// Creates an event.
    public init(
        deliveryID: String,
        urlString: String,
        isFileURL: Bool,
        contentType: String? = nil,
        mailbox: String? = nil,
        sourceApplication: String? = nil,
        annotation: [String: PropertyListValue] = [:]
    ) {
        self.deliveryID = deliveryID
        self.urlString = urlString
        self.isFileURL = isFileURL
        self.contentType = contentType
        self.mailbox = mailbox
        self.sourceApplication = sourceApplication
        self.annotation = annotation
    }

    /// The event for a file in a handler's sandbox, with its URL built from the absolute path.
    public static func file(
        deliveryID: String,
        absolutePath: [UInt8],
        contentType: String?,
        mailbox: String?,
        sourceApplication: String? = nil,
        annotation: [String: PropertyListValue] = [:]
    ) throws(ProtocolError) -> DocumentEvent {
        DocumentEvent(
            deliveryID: deliveryID,
            urlString: try FileURL.string(forAbsolutePath: absolutePath),
            isFileURL: true,
            contentType: contentType,
            mailbox: mailbox,
            sourceApplication: sourceApplication,
            annotation: annotation)
    }

    /// The `launch` message carrying this document (`application:didFinishLaunchingWithOptions:`).
    public func launchMessage() -> DaemonMessage {
        .launch(self)
    }

    /// The `openURL` message carrying this document (`application:openURL:sourceApplication:annotation:`).
    public func openURLMessage() -> DaemonMessage {
        .openURL(self)
    }
}
