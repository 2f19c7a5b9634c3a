import DocRouteProtocol
import Testing

@Suite struct DaemonMessageTests {
    static let moleculesAnnotation: [String: PropertyListValue] = [
        "mailbox": "Mail", "originalFilename": "1abc.pdb", "size": 5120,
    ]

    static let launchedDocument = DocumentEvent(
        deliveryID: "…",
        urlString:
            "file:///var/lib/docroute/containers/com.sunsetlakesoftware.molecules/Documents/Inbox/Mail/1abc.pdb",
        isFileURL: true,
        contentType: "com.sunsetlakesoftware.molecules.pdb",
        mailbox: "Mail",
        sourceApplication: "com.apple.mobilemail",
        annotation: moleculesAnnotation)

    @Test func launchIsByteForByteTheContractExample() throws {
        let expected = #"{"type":"launch","deliveryID":"…","launchOptions":{"UIApplicationLaunchOptionsURLKey":"file:///var/lib/docroute/containers/com.sunsetlakesoftware.molecules/Documents/Inbox/Mail/1abc.pdb","UIApplicationLaunchOptionsSourceApplicationKey":"com.apple.mobilemail","UIApplicationLaunchOptionsAnnotationKey":{"mailbox":"Mail","originalFilename":"1abc.pdb","size":5120}},"isFileURL":true,"contentType":"com.sunsetlakesoftware.molecules.pdb","mailbox":"Mail"}"#
        let line = Self.launchedDocument.launchMessage().encodedLine()
        #expect(text(line) == expected + "\n")
        // The same text as PROTOCOL.md's example block, read from the document itself.
        #expect(try jsonExample(startingWith: #"{"type":"launch""#) == expected)
    }

    @Test func openURLIsByteForByteTheContractExample() throws {
        let event = DocumentEvent(
            deliveryID: "…",
            urlString: "file:///…/Documents/Inbox/Mail/1abc-1.pdb",
            isFileURL: true,
            contentType: "com.sunsetlakesoftware.molecules.pdb",
            mailbox: "Mail",
            sourceApplication: "com.apple.mobilemail",
            annotation: ["mailbox": "Mail", "originalFilename": "1abc.pdb", "size": 5120])
        let annotationJSON = #"{"mailbox":"Mail","originalFilename":"1abc.pdb","size":5120}"#
        let example = try #require(try jsonExample(startingWith: #"{"type":"openURL""#))
        let expected = example.replacingOccurrences(of: "{…}", with: annotationJSON)
        #expect(
            expected
                == #"{"type":"openURL","deliveryID":"…","url":"file:///…/Documents/Inbox/Mail/1abc-1.pdb","sourceApplication":"com.apple.mobilemail","annotation":{"mailbox":"Mail","originalFilename":"1abc.pdb","size":5120},"isFileURL":true,"contentType":"com.sunsetlakesoftware.molecules.pdb","mailbox":"Mail"}"#
        )
        #expect(text(event.openURLMessage().encodedLine()) == expected + "\n")
    }

    @Test func plainLaunchHasEmptyOptionsAndNoDeliveryID() throws {
        let line = DaemonMessage.plainLaunch.encodedLine()
        #expect(text(line) == "{\"type\":\"launch\",\"launchOptions\":{}}\n")
        #expect(try DaemonMessage(decoding: line.dropLast()) == .launch(nil))
    }

    @Test func customSchemeOpenURLHasNoContentTypeOrMailboxAndKeepsTheURL() throws {
        let url = "todolist://www.acme.com?Quarterly%20Report#200806231300"
        let event = DocumentEvent(deliveryID: "d2", urlString: url, isFileURL: false, sourceApplication: "com.acme.mail")
        let line = event.openURLMessage().encodedLine()
        #expect(
            text(line)
                == #"{"type":"openURL","deliveryID":"d2","url":"todolist://www.acme.com?Quarterly%20Report#200806231300","sourceApplication":"com.acme.mail","annotation":{},"isFileURL":false}"#
                + "\n")
        #expect(try DaemonMessage(decoding: line.dropLast()) == .openURL(event))
        let launch = event.launchMessage().encodedLine()
        #expect(text(launch).contains(#""UIApplicationLaunchOptionsURLKey":"todolist://www.acme.com?Quarterly%20Report#200806231300""#))
    }

    @Test func repliesOfTheContractRoundTripByteForByte() throws {
        let examples = try inlineMessageExamples()
        for expected in [
            #"{"type":"opened","id":"2","deliveryID":"…","bundleIdentifier":"…","contentType":"…"}"#,
            #"{"type":"released","id":"5","path":"…","deliveryID":"…","bundleIdentifier":"…","contentType":"…"}"#,
        ] {
            #expect(examples.contains(expected))
            #expect(text(try DaemonMessage(decoding: bytes(expected)).encodedLine()) == expected + "\n")
        }
        // The contract elides the feature list (`[…]`); the fields and their order are these.
        #expect(examples.contains(#"{"type":"welcome","protocol":1,"daemon":"docrouted/VERSION","features":[…],"descriptorSocket":"docroute.fd.sock"}"#))
        let welcome = #"{"type":"welcome","protocol":1,"daemon":"docrouted/VERSION","features":["candidates","open-with","open-descriptor","release","history","redeliver","compete"],"descriptorSocket":"docroute.fd.sock"}"#
        let message = DaemonMessage.welcome(protocol: 1, daemon: "docrouted/VERSION", features: ProtocolFeature.allCases.map(\.rawValue),
                                            descriptorSocket: "docroute.fd.sock")
        #expect(text(message.encodedLine()) == welcome + "\n")
        #expect(try DaemonMessage(decoding: bytes(welcome)) == message)
        // A welcome of a daemon without optional requests still reads, with no features.
        #expect(try DaemonMessage(decoding: bytes(#"{"type":"welcome","protocol":1,"daemon":"d"}"#)) == .welcome(protocol: 1, daemon: "d"))
    }

    @Test func candidatesReplyOfTheContractReads() throws {
        let examples = try inlineMessageExamples()
        let example = try #require(examples.first { $0.hasPrefix(#"{"type":"candidates","id":"4","contentType""#) })
        let filled = example.replacingOccurrences(of: "…", with: "x")
        let message = try DaemonMessage(decoding: bytes(filled))
        #expect(message == .candidates(id: "4", contentType: "x", candidates: [
            OpenCandidate(bundleIdentifier: "x", name: "x", matchedType: "x", rank: "Owner", role: "Viewer", isDefault: true),
        ]))
        #expect(text(message.encodedLine()) == filled + "\n")
        let scheme = DaemonMessage.candidates(id: nil, contentType: nil, candidates: [
            OpenCandidate(bundleIdentifier: "com.acme.todolist", name: "To Do", matchedType: "todolist", rank: "Default", role: "Viewer", isDefault: true),
            OpenCandidate(bundleIdentifier: "org.other", name: "org.other", matchedType: "todolist", rank: "Default", role: "Viewer", isDefault: false),
        ])
        #expect(try DaemonMessage(decoding: scheme.encodedLine().dropLast()) == scheme)
        #expect(!text(scheme.encodedLine()).contains("contentType"))
    }

    @Test func everyMessageIsOneLineAndRoundTrips() throws {
        let messages: [DaemonMessage] = [
            .welcome(protocol: 1, daemon: "docrouted/0.1", id: "h"),
            .welcome(protocol: 1, daemon: "docrouted/0.1", id: "h", features: ["candidates", "x-future"], descriptorSocket: "docroute.fd.sock"),
            .candidates(id: "c", contentType: "public.plain-text", candidates: []),
            .subscribed(id: "1", bundleIdentifier: "com.sunsetlakesoftware.molecules", pending: 3),
            .launch(Self.launchedDocument),
            .plainLaunch,
            .openURL(Self.launchedDocument),
            .opened(id: "2", deliveryID: "d", bundleIdentifier: "com.acme.todolist", contentType: nil),
            .opened(id: nil, deliveryID: "d", bundleIdentifier: "b", contentType: "public.plain-text"),
            .status(
                id: "3",
                handlers: [HandlerStatus(bundleIdentifier: "b", subscribed: true, pending: 2, extra: ["uid": 1000])],
                inboxes: [InboxStatus(path: "/srv/inbox", mailboxes: ["Mail", "Shared"])],
                extra: ["daemon": "docrouted/0.1", "uptimeSeconds": 12.5]),
            .released(id: "5", path: "/q/INBOX/a_part2.mailpart", deliveryID: "d", bundleIdentifier: "b", contentType: "public.data"),
            .released(id: "6", path: "/q/INBOX/a_part2.mailpart", deliveryID: nil, bundleIdentifier: nil, contentType: nil),
            .error(id: "4", code: .notFound, message: "no delivery \"x\"\nis pending"),
            .error(id: nil, code: .internal, message: "disk full"),
        ]
        for message in messages {
            let line = message.encodedLine()
            #expect(line.last == UInt8(ascii: "\n"))
            #expect(line.dropLast().contains(UInt8(ascii: "\n")) == false)
            #expect(try DaemonMessage(decoding: line.dropLast()) == message)
        }
    }

    @Test func statusPutsRequiredFieldsFirstAndExtraFieldsCannotReplaceThem() {
        let message = DaemonMessage.status(
            id: "3",
            handlers: [HandlerStatus(bundleIdentifier: "b", subscribed: false, pending: 0, extra: ["pending": 99])],
            inboxes: [],
            extra: ["type": "hijack", "handlers": [], "zz": nil])
        #expect(
            text(message.encodedLine())
                == #"{"type":"status","id":"3","handlers":[{"bundleIdentifier":"b","subscribed":false,"pending":0}],"inboxes":[],"zz":null}"#
                + "\n")
    }

    @Test func aHandlersHostsAndInstancesReadFromAStatusReply() throws {
        let line = #"{"type":"status","id":"3","handlers":["#
            + #"{"bundleIdentifier":"a","subscribed":true,"pending":0,"instances":3,"hosts":["host-a","host-b"]},"#
            + #"{"bundleIdentifier":"b","subscribed":false,"pending":2,"hosts":[]},"#
            + #"{"bundleIdentifier":"c","subscribed":true,"pending":0}],"inboxes":[]}"#
        guard case .status(_, let handlers, _, _) = try DaemonMessage(decoding: Array(line.utf8)) else {
            Issue.record("not a status reply")
            return
        }
        #expect(handlers.map(\.hosts) == [["host-a", "host-b"], [], nil], "absent (no fleet) is not empty (subscribed nowhere)")
        #expect(handlers.map(\.instances) == [3, 0, 1])
    }

    @Test func slashesAreNotEscapedAndControlCharactersAre() {
        let line = text(DaemonMessage.error(id: "a/b", code: .badRequest, message: "tab\there \"q\" \\ \u{1}").encodedLine())
        #expect(line == #"{"type":"error","id":"a/b","code":"bad-request","message":"tab\there \"q\" \\ \u0001"}"# + "\n")
    }

    @Test func errorCodesAreTheContractTable() throws {
        let document = try protocolDocument()
        #expect(ErrorCode.allCases.count == 10)
        for code in ErrorCode.allCases {
            #expect(document.contains("| `\(code.rawValue)` |"))
        }
    }

    @Test func unknownErrorCodeFromANewerDaemonDecodesAndRoundTrips() throws {
        let line = #"{"type":"error","id":"1","code":"quota-exceeded","message":"too many"}"#
        let message = try DaemonMessage(decoding: bytes(line))
        #expect(message == .error(id: "1", code: ErrorCode(rawValue: "quota-exceeded"), message: "too many"))
        guard case .error(_, let code, _) = message else {
            Issue.record("not an error message: \(message)")
            return
        }
        #expect(code.rawValue == "quota-exceeded")
        #expect(!code.isKnown)
        #expect(code != .internal)
        #expect(text(message.encodedLine()) == line + "\n")
    }

    @Test func knownErrorCodesDecodeAsBefore() throws {
        for code in ErrorCode.allCases {
            let message = try DaemonMessage(decoding: bytes(#"{"type":"error","id":"7","code":"\#(code.rawValue)","message":"m"}"#))
            #expect(message == .error(id: "7", code: code, message: "m"))
            #expect(code.isKnown)
        }
        #expect(ErrorCode(rawValue: "bad-request") == .badRequest)
        #expect(ErrorCode.allCases.map(\.rawValue) == [
            "bad-request", "unsupported-protocol", "unknown-handler", "not-permitted", "already-subscribed",
            "no-handler", "not-found", "too-many-connections", "over-limit", "internal",
        ])
        switch ErrorCode(rawValue: "not-found") {
        case .notFound: break
        default: Issue.record("a known code does not match its constant in a switch")
        }
    }

    @Test func launchWithoutDeliveryIDButWithURLIsRejected() {
        let error = #expect(throws: ProtocolError.self) {
            try DaemonMessage(decoding: bytes(#"{"type":"launch","launchOptions":{"UIApplicationLaunchOptionsURLKey":"file:///a"},"isFileURL":true}"#))
        }
        #expect(error?.message == "'launch' is missing field 'deliveryID'")
    }

    @Test func annotationWithNullIsRejected() {
        let error = #expect(throws: ProtocolError.self) {
            try DaemonMessage(decoding: bytes(#"{"type":"openURL","deliveryID":"d","url":"x:y","isFileURL":false,"annotation":{"a":[null]}}"#))
        }
        #expect(error?.message == "'openURL': field 'annotation' must be property-list compatible and cannot contain null")
    }

    @Test func statusEntryErrorsNameTheNestedField() {
        let error = #expect(throws: ProtocolError.self) {
            try DaemonMessage(decoding: bytes(#"{"type":"status","id":"3","handlers":[{"bundleIdentifier":"b","subscribed":true,"pending":"2"}],"inboxes":[]}"#))
        }
        #expect(error?.message == "field 'handlers[0].pending' of 'status' must be an integer, found string")
        #expect(error?.requestID == "3")
    }

    @Test func fileEventBuildsItsURLFromRawPathBytes() throws {
        let path: [UInt8] = Array("/var/lib/docroute/containers/b/Documents/Inbox/Mail/".utf8) + [0x66, 0xE9, 0x20, 0x23, 0x2E, 0x70, 0x64, 0x62]
        let event = try DocumentEvent.file(
            deliveryID: "d", absolutePath: path, contentType: "public.data", mailbox: "Mail")
        #expect(event.urlString == "file:///var/lib/docroute/containers/b/Documents/Inbox/Mail/f%E9%20%23.pdb")
        #expect(event.isFileURL)
    }
}
