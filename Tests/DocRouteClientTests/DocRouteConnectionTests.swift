import DocRouteClient
import Foundation
import Testing

@Suite struct DocRouteConnectionTests {
    static let bundle = "com.sunsetlakesoftware.molecules"

    static let mailDocument = DocumentEvent(
        deliveryID: "d1",
        urlString: "file:///var/lib/docroute/containers/com.sunsetlakesoftware.molecules/Documents/Inbox/Mail/1abc.pdb",
        isFileURL: true,
        contentType: "com.sunsetlakesoftware.molecules.pdb",
        mailbox: "Mail",
        sourceApplication: "com.apple.mobilemail",
        annotation: ["mailbox": "Mail", "originalFilename": "1abc.pdb", "size": 5120])

    static let todoURL = DocumentEvent(
        deliveryID: "d2", urlString: "todolist://www.acme.com?Quarterly%20Report#200806231300", isFileURL: false)

    @Test func subscribesReceivesEventsAndWritesAcks() async throws {
        try await FakeDaemon.withConnection(serving: { client in
            #expect(try await client.expectLine() == #"{"type":"hello","id":"1","protocol":1}"#)
            try await client.send(.welcome(protocol: 1, daemon: "docrouted/test", id: "1"))
            #expect(
                try await client.expectLine()
                    == #"{"type":"subscribe","id":"2","bundleIdentifier":"com.sunsetlakesoftware.molecules"}"#)
            try await client.send(.subscribed(id: "2", bundleIdentifier: Self.bundle, pending: 2))
            // Both events in one write: the client must split them.
            try await client.send(
                raw: String(decoding: Self.mailDocument.launchMessage().encodedLine() + Self.todoURL.openURLMessage().encodedLine(), as: UTF8.self))
            #expect(try await client.expectLine() == #"{"type":"ack","id":"ack:d1","deliveryID":"d1","handled":true}"#)
            #expect(try await client.expectLine() == #"{"type":"ack","id":"ack:d2","deliveryID":"d2","handled":false}"#)
            #expect(
                try await client.expectLine()
                    == #"{"type":"open","id":"3","url":"file:///srv/shared/1abc.pdb","mailbox":"Shared"}"#)
            // An event may come between a request and its reply.
            try await client.send(.openURL(DocumentEvent(deliveryID: "d3", urlString: "file:///x/2.pdb", isFileURL: true)))
            try await client.send(
                .opened(id: "3", deliveryID: "d4", bundleIdentifier: Self.bundle, contentType: "com.sunsetlakesoftware.molecules.pdb"))
            #expect(try await client.expectLine() == #"{"type":"status","id":"4"}"#)
            try await client.send(
                .status(
                    id: "4",
                    handlers: [HandlerStatus(bundleIdentifier: Self.bundle, subscribed: true, pending: 1)],
                    inboxes: [InboxStatus(path: "/srv/inbox", mailboxes: ["Mail"])],
                    extra: ["daemon": "docrouted/test"]))
            #expect(try await client.readLine() == nil)
        }) { path in

            let connection = try await DocRouteConnection.connect(socketPath: path)
            #expect(try await connection.hello() == DaemonWelcome(protocolVersion: 1, daemon: "docrouted/test"))
            #expect(try await connection.subscribe(bundleIdentifier: Self.bundle) == 2)

            var events = connection.events.makeAsyncIterator()
            guard case .launch(let options)? = try await events.next() else {
                Issue.record("the first event is not launch")
                return
            }
            #expect(options.document == Self.mailDocument)
            #expect(options.url?.isFileURL == true)
            #expect(options.url?.lastPathComponent == "1abc.pdb")
            #expect(options[LaunchOptionsKey.url] == .string(Self.mailDocument.urlString))
            #expect(options[LaunchOptionsKey.sourceApplication] == "com.apple.mobilemail")
            #expect(options.annotation["size"] == 5120)
            try await connection.acknowledge(deliveryID: "d1", handled: true)

            guard case .openURL(let todo)? = try await events.next() else {
                Issue.record("the second event is not openURL")
                return
            }
            #expect(todo == Self.todoURL)
            #expect(todo.url?.isFileURL == false)
            #expect(todo.url?.scheme == "todolist")
            #expect(todo.filePath == nil)
            try await connection.acknowledge(deliveryID: "d2", handled: false)

            let opened = try await connection.open(url: "file:///srv/shared/1abc.pdb", mailbox: "Shared")
            #expect(opened == OpenedDocument(deliveryID: "d4", bundleIdentifier: Self.bundle, contentType: "com.sunsetlakesoftware.molecules.pdb"))
            guard case .openURL(let third)? = try await events.next() else {
                Issue.record("the event sent before the reply was lost")
                return
            }
            #expect(third.deliveryID == "d3")
            #expect(third.filePath == "/x/2.pdb")

            let status = try await connection.status()
            #expect(status.handlers == [HandlerStatus(bundleIdentifier: Self.bundle, subscribed: true, pending: 1)])
            #expect(status.inboxes == [InboxStatus(path: "/srv/inbox", mailboxes: ["Mail"])])
            #expect(status.jsonObject["daemon"] == "docrouted/test")

            await connection.close()
            // Closed by us: the events end without an error.
            #expect(try await events.next() == nil)
        }
    }

    @Test func daemonErrorsSurfaceWithTheirCode() async throws {
        try await FakeDaemon.withConnection(serving: { client in
            _ = try await client.expectLine()
            try await client.send(
                .error(id: "1", code: .unknownHandler, message: "no handler 'com.example.nothing' is registered"))
            _ = try await client.expectLine()
            try await client.send(.error(id: "ack:zz", code: .notFound, message: "no delivery 'zz' for this handler"))
            // A code of a newer daemon, which this library does not know.
            try await client.send(raw: #"{"type":"error","id":"ack:yy","code":"quota-exceeded","message":"too many"}"# + "\n")
            // A line that is not a message is skipped, not fatal.
            try await client.send(raw: "garbage\n")
            _ = try await client.expectLine()
            try await client.send(.welcome(protocol: 1, daemon: "x", id: "2"))
            #expect(try await client.readLine() == nil)
        }) { path in
            let connection = try await DocRouteConnection.connect(socketPath: path)
            let error = await #expect(throws: DocRouteClientError.self) {
                try await connection.subscribe(bundleIdentifier: "com.example.nothing")
            }
            #expect(error?.code == .daemon(.unknownHandler))
            #expect(error?.daemonCode == .unknownHandler)
            #expect(error?.message == "no handler 'com.example.nothing' is registered")
            #expect(error?.requestID == "1")

            try await connection.acknowledge(deliveryID: "zz", handled: true)
            var events = connection.events.makeAsyncIterator()
            guard case .daemonError(let ackError)? = try await events.next() else {
                Issue.record("the failed ack did not surface")
                return
            }
            #expect(ackError.code == .daemon(.notFound))
            #expect(ackError.requestID == "ack:zz")
            guard case .daemonError(let newer)? = try await events.next() else {
                Issue.record("the error with a newer daemon's code did not surface")
                return
            }
            #expect(newer.code == .daemon(ErrorCode(rawValue: "quota-exceeded")))
            #expect(newer.daemonCode?.isKnown == false)
            #expect("\(newer)" == "quota-exceeded: too many")

            // A reply of the wrong type for the request.
            let wrong = await #expect(throws: DocRouteClientError.self) { try await connection.status() }
            #expect(wrong?.code == .unexpectedReply)
            await connection.close()
        }
    }

    @Test func daemonGoingAwayFailsPendingRequestsAndEndsEventsWithAnError() async throws {
        try await FakeDaemon.withConnection(serving: { client in
            _ = try await client.expectLine()
            try await client.send(raw: #"{"type":"subscr"#)  // then hang up mid-line
        }) { path in
            let connection = try await DocRouteConnection.connect(socketPath: path)
            let error = await #expect(throws: DocRouteClientError.self) {
                try await connection.subscribe(bundleIdentifier: Self.bundle)
            }
            #expect(error?.code == .connectionClosed)
            var events = connection.events.makeAsyncIterator()
            let ended = await #expect(throws: DocRouteClientError.self) { try await events.next() }
            #expect(ended?.code == .connectionClosed)
            let late = await #expect(throws: DocRouteClientError.self) {
                try await connection.acknowledge(deliveryID: "d", handled: true)
            }
            #expect(late?.code == .connectionClosed)
            await connection.close()
        }
    }

    @Test func connectingWhereNothingListensSaysWhereAndWhatToDo() async throws {
        try await withTemporarySocketPath { path in
            let error = await #expect(throws: DocRouteClientError.self) {
                try await DocRouteConnection.connect(socketPath: path)
            }
            #expect(error?.code == .connectFailed)
            #expect(error?.message.contains(path) == true)
            #expect(error?.message.contains("DOCROUTE_SOCKET") == true)
        }
    }

    @Test func socketPathComesFromTheEnvironmentOrTheDefault() {
        #expect(DocRouteConnection.defaultSocketPath(environment: [:]) == "/run/docroute/docroute.sock")
        #expect(DocRouteConnection.defaultSocketPath(environment: ["DOCROUTE_SOCKET": ""]) == "/run/docroute/docroute.sock")
        #expect(DocRouteConnection.defaultSocketPath(environment: ["DOCROUTE_SOCKET": "/tmp/d.sock"]) == "/tmp/d.sock")
    }

    @Test func plainLaunchHasNothingToAcknowledge() {
        let options = LaunchOptions(document: nil)
        #expect(options.isEmpty)
        #expect(options.deliveryID == nil)
        #expect(options.url == nil)
        #expect(options[LaunchOptionsKey.url] == nil)
        #expect(options.annotation.isEmpty)
    }

    @Test func nonUTF8FileNamesStayAvailableAsBytes() {
        let event = DocumentEvent(deliveryID: "d", urlString: "file:///inbox/caf%E9.txt", isFileURL: true)
        #expect(event.filePathBytes == Array("/inbox/caf".utf8) + [0xE9] + Array(".txt".utf8))
        #expect(event.filePath == nil)
    }
}
