import Foundation

/// What a handler implements, shaped like `UIApplicationDelegate`'s document methods.
///
/// ``DocumentHandlerRunner`` calls these one at a time, in delivery order, and acknowledges
/// each document with the returned `Bool` as `handled`.
public protocol DocumentHandlerDelegate: Sendable {
    /// `application:didFinishLaunchingWithOptions:`: called once per subscription, first.
    /// `options` holds the oldest document that was waiting, or nothing (a plain launch).
    /// Return `false` to decline that document (like returning `NO`); for a plain launch the
    /// result is not used.
    func didFinishLaunching(options: LaunchOptions) async -> Bool

    /// `application:openURL:sourceApplication:annotation:`: every other document or URL.
    /// Return `true` when the handler took it, `false` to decline it. Tell files from
    /// custom-scheme URLs with `url.isFileURL`. The default implementation calls
    /// ``handleOpen(_:)``, as UIKit does for a delegate that lacks the newer method.
    func open(_ url: URL, sourceApplication: String?, annotation: [String: PropertyListValue]) async -> Bool

    /// `application:handleOpenURL:`, the older method: only the URL. Called by the default
    /// ``open(_:sourceApplication:annotation:)``; the default implementation declines (`false`),
    /// so a delegate implements one of the two.
    func handleOpen(_ url: URL) async -> Bool

    /// The same call with everything the daemon sent (delivery ID, content type, mailbox, the
    /// raw URL text). The default implementation calls ``open(_:sourceApplication:annotation:)``,
    /// and declines a URL that Foundation cannot parse.
    func open(document: DocumentEvent) async -> Bool
}

extension DocumentHandlerDelegate {
    /// Calls ``handleOpen(_:)``: the fallback of a delegate written for the older method.
    public func open(_ url: URL, sourceApplication: String?, annotation: [String: PropertyListValue]) async -> Bool {
        await handleOpen(url)
    }

    /// Declines: a delegate that implements neither method takes nothing.
    public func handleOpen(_ url: URL) async -> Bool {
        false
    }

    /// Calls ``open(_:sourceApplication:annotation:)``.
    public func open(document: DocumentEvent) async -> Bool {
        guard let url = document.url else { return false }
        return await open(url, sourceApplication: document.sourceApplication, annotation: document.annotation)
    }
}
