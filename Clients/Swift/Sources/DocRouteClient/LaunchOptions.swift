import Foundation

/// What `application:didFinishLaunchingWithOptions:` receives: the oldest document that was
/// waiting when the handler subscribed, or nothing (a plain launch).
public struct LaunchOptions: Sendable, Hashable {
    /// The document the handler is launched with; `nil` for a plain launch.
    public var document: DocumentEvent?

    /// Creates launch options.
    public init(document: DocumentEvent?) {
        self.document = document
    }

    /// Whether this is a plain launch, with nothing to open or acknowledge.
    public var isEmpty: Bool { document == nil }

    /// `UIApplicationLaunchOptionsURLKey` as a URL.
    public var url: URL? { document?.url }

    /// `UIApplicationLaunchOptionsSourceApplicationKey`.
    public var sourceApplication: String? { document?.sourceApplication }

    /// `UIApplicationLaunchOptionsAnnotationKey`; empty for a plain launch.
    public var annotation: [String: PropertyListValue] { document?.annotation ?? [:] }

    /// The delivery to acknowledge; `nil` for a plain launch.
    public var deliveryID: String? { document?.deliveryID }

    /// The options looked up by their UIKit key names (``LaunchOptionsKey``), as
    /// `[launchOptions valueForKey:UIApplicationLaunchOptionsURLKey]` does.
    public subscript(key: String) -> PropertyListValue? {
        guard let document else { return nil }
        switch key {
        case LaunchOptionsKey.url: return .string(document.urlString)
        case LaunchOptionsKey.sourceApplication: return document.sourceApplication.map(PropertyListValue.string)
        case LaunchOptionsKey.annotation: return .dictionary(document.annotation)
        default: return nil
        }
    }
}
