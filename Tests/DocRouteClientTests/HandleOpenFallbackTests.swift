import DocRouteClient
import Foundation
import Testing

/// A delegate written for the older `application:handleOpenURL:` only.
struct LegacyDelegate: DocumentHandlerDelegate {
    let calls: DelegateCalls

    func didFinishLaunching(options: LaunchOptions) async -> Bool { true }

    func handleOpen(_ url: URL) async -> Bool {
        await calls.record(.open(url: url.absoluteString, sourceApplication: nil))
        return !url.absoluteString.contains("decline")
    }
}

/// The default `open(_:sourceApplication:annotation:)` falls back to `handleOpen(_:)`, as UIKit does.
@Suite struct HandleOpenFallbackTests {
    static func event(_ url: String) -> DocumentEvent {
        DocumentEvent(
            deliveryID: "d1", urlString: url, isFileURL: url.hasPrefix("file:"), contentType: nil, mailbox: nil,
            sourceApplication: "com.apple.mobilemail", annotation: [:])
    }

    @Test func aDelegateWithOnlyHandleOpenGetsEveryDocument() async {
        let calls = DelegateCalls()
        let delegate = LegacyDelegate(calls: calls)
        #expect(await delegate.open(document: Self.event("file:///c/Documents/Inbox/Mail/1abc.pdb")))
        #expect(await delegate.open(document: Self.event("todolist://www.acme.com?decline#1")) == false)
        #expect(await calls.calls == [
            .open(url: "file:///c/Documents/Inbox/Mail/1abc.pdb", sourceApplication: nil),
            .open(url: "todolist://www.acme.com?decline#1", sourceApplication: nil),
        ])
    }

    @Test func theNewerMethodWinsWhenImplemented() async {
        let calls = DelegateCalls()
        #expect(await RecordingDelegate(calls: calls).open(document: Self.event("todolist://x")))
        #expect(await calls.calls == [.open(url: "todolist://x", sourceApplication: "com.apple.mobilemail")])
    }
}
