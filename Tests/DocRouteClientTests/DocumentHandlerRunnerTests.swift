import DocRouteClient
import Foundation
import Testing

/// Records what the runner passes to the delegate.
actor DelegateCalls {
    enum Call: Equatable {
        case launch(deliveryID: String?)
        case open(url: String, sourceApplication: String?)
    }

    private(set) var calls: [Call] = []

    func record(_ call: Call) { calls.append(call) }
}

/// Declines any URL whose text contains "decline"; takes everything else.
struct RecordingDelegate: DocumentHandlerDelegate {
    let calls: DelegateCalls

    func didFinishLaunching(options: LaunchOptions) async -> Bool {
        await calls.record(.launch(deliveryID: options.deliveryID))
        return true
    }

    func open(_ url: URL, sourceApplication: String?, annotation: [String: PropertyListValue]) async -> Bool {
        await calls.record(.open(url: url.absoluteString, sourceApplication: sourceApplication))
        return !url.absoluteString.contains("decline")
    }
}

@Suite struct DocumentHandlerRunnerTests {
    static let bundle = "com.sunsetlakesoftware.molecules"

    /// What every connection of the runner must start with.
    static func expectHandshake(_ client: FakeDaemonConnection, pending: Int) async throws {
        #expect(try await client.expectLine() == #"{"type":"hello","id":"1","protocol":1}"#)
        try await client.send(.welcome(protocol: 1, daemon: "docrouted/test", id: "1"))
        #expect(try await client.expectLine() == #"{"type":"subscribe","id":"2","bundleIdentifier":"com.sunsetlakesoftware.molecules"}"#)
        try await client.send(.subscribed(id: "2", bundleIdentifier: bundle, pending: pending))
    }

    @Test func dispatchesAcknowledgesAndResubscribesAfterTheDaemonRestarts() async throws {
        try await withTemporarySocketPath { path in
            try await withTimeout {
                let calls = DelegateCalls()
                let runner = DocumentHandlerRunner(
                    bundleIdentifier: Self.bundle,
                    delegate: RecordingDelegate(calls: calls),
                    socketPath: path,
                    backoff: ReconnectBackoff(initial: .milliseconds(10), maximum: .milliseconds(50)))

                let first = try await FakeDaemon.listen(at: path)
                let running = Task { try await runner.run() }

                // The app was not running: launched with the waiting document, then sent a URL.
                try await first.serve { client in
                    try await Self.expectHandshake(client, pending: 2)
                    try await client.send(
                        .launch(DocumentEvent(
                            deliveryID: "d1", urlString: "file:///c/Documents/Inbox/Mail/1abc.pdb", isFileURL: true,
                            contentType: "com.sunsetlakesoftware.molecules.pdb", mailbox: "Mail",
                            sourceApplication: "com.apple.mobilemail")))
                    #expect(try await client.expectLine() == #"{"type":"ack","id":"ack:d1","deliveryID":"d1","handled":true}"#)
                    try await client.send(
                        .openURL(DocumentEvent(
                            deliveryID: "d2", urlString: "todolist://www.acme.com?decline#1", isFileURL: false,
                            sourceApplication: "com.acme.mail")))
                    #expect(try await client.expectLine() == #"{"type":"ack","id":"ack:d2","deliveryID":"d2","handled":false}"#)
                }
                // The daemon is gone; while it is away the runner keeps trying.
                try await Task.sleep(for: .milliseconds(120))

                let second = try await FakeDaemon.listen(at: path)
                try await second.serve { client in
                    try await Self.expectHandshake(client, pending: 0)
                    try await client.send(.plainLaunch)
                    try await client.send(
                        .openURL(DocumentEvent(deliveryID: "d3", urlString: "file:///c/Documents/Inbox/Mail/2.pdb", isFileURL: true)))
                    // The plain launch is not acknowledged; the next line is d3's ack.
                    #expect(try await client.expectLine() == #"{"type":"ack","id":"ack:d3","deliveryID":"d3","handled":true}"#)
                }

                running.cancel()
                try await running.value
                #expect(
                    await calls.calls == [
                        .launch(deliveryID: "d1"),
                        .open(url: "todolist://www.acme.com?decline#1", sourceApplication: "com.acme.mail"),
                        .launch(deliveryID: nil),
                        .open(url: "file:///c/Documents/Inbox/Mail/2.pdb", sourceApplication: nil),
                    ])
            }
        }
    }

    @Test func stopsWhenTheDaemonRefusesTheHandler() async throws {
        try await withTemporarySocketPath { path in
            try await withTimeout {
                let daemon = try await FakeDaemon.listen(at: path)
                let runner = DocumentHandlerRunner(
                    bundleIdentifier: Self.bundle, delegate: RecordingDelegate(calls: DelegateCalls()), socketPath: path,
                    backoff: ReconnectBackoff(initial: .milliseconds(10), maximum: .milliseconds(50)))
                async let served: Void = daemon.serve { client in
                    _ = try await client.expectLine()
                    try await client.send(.welcome(protocol: 1, daemon: "docrouted/test", id: "1"))
                    _ = try await client.expectLine()
                    try await client.send(.error(id: "2", code: .notPermitted, message: "uid 1000 may not subscribe as com.sunsetlakesoftware.molecules"))
                    #expect(try await client.readLine() == nil)
                }
                let error = await #expect(throws: DocRouteClientError.self) { try await runner.run() }
                #expect(error?.code == .daemon(.notPermitted))
                try await served
            }
        }
    }

    @Test func backoffDoublesFrom100MillisecondsUpToFiveSeconds() {
        let backoff = ReconnectBackoff()
        #expect((1...8).map { backoff.delay(afterFailures: $0) } == [
            .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
            .milliseconds(1600), .milliseconds(3200), .seconds(5), .seconds(5),
        ])
        #expect(backoff.delay(afterFailures: 1000) == .seconds(5))
    }
}
