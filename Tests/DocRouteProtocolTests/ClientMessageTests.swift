import DocRouteProtocol
import Testing

@Suite struct ClientMessageTests {
    @Test func decodesEveryRequestOfTheContract() throws {
        #expect(try ClientMessage(decoding: bytes(#"{"type":"hello","protocol":1}"#)) == .hello(protocol: 1))
        #expect(
            try ClientMessage(decoding: bytes(#"{"type":"subscribe","id":"1","bundleIdentifier":"com.sunsetlakesoftware.molecules"}"#))
                == .subscribe(id: "1", bundleIdentifier: "com.sunsetlakesoftware.molecules"))
        #expect(
            try ClientMessage(decoding: bytes(#"{"type":"ack","deliveryID":"d-7","handled":false}"#))
                == .ack(deliveryID: "d-7", handled: false))
        #expect(
            try ClientMessage(decoding: bytes(#"{"type":"open","id":"2","url":"file:///srv/shared/1abc.pdb","mailbox":"Shared"}"#))
                == .open(id: "2", url: "file:///srv/shared/1abc.pdb", mailbox: "Shared"))
        #expect(try ClientMessage(decoding: bytes(#"{"type":"status","id":"3"}"#)) == .status(id: "3"))
    }

    @Test func customSchemeURLPassesThroughUntouched() throws {
        let line = #"{"type":"open","id":"2","url":"todolist://www.acme.com?Quarterly%20Report#200806231300"}"#
        let message = try ClientMessage(decoding: bytes(line))
        #expect(message == .open(id: "2", url: "todolist://www.acme.com?Quarterly%20Report#200806231300", mailbox: nil))
        #expect(text(message.encodedLine()) == line + "\n")
    }

    @Test func requestExamplesOfTheContractRoundTripByteForByte() throws {
        let clientTypes = Set(ClientMessage.types.map { #"{"type":"\#($0)""# })
        let examples = try inlineMessageExamples().filter { example in
            // `{"type":"status","id":"3",…}` and the candidates reply are the daemon's, elided; a
            // competing `subscribe` is a proposal the daemon does not serve yet.
            clientTypes.contains { example.hasPrefix($0) } && !example.contains(",…") && !example.contains(#""candidates":["#)
                && !example.contains(#""compete":"#)
        }
        // hello, subscribe, ack, two opens, the descriptor open, candidates, status; release, history
        // and the two forms of redeliver (proposals).
        #expect(examples.count == 12)
        for example in examples {
            let message = try ClientMessage(decoding: bytes(example))
            #expect(text(message.encodedLine()) == example + "\n")
        }
    }

    @Test func openInAndDescriptorRequestsDecode() throws {
        #expect(
            try ClientMessage(decoding: bytes(#"{"type":"open","id":"2","url":"file:///a.pdb","bundleIdentifier":"org.example.viewer"}"#))
                == .open(id: "2", url: "file:///a.pdb", bundleIdentifier: "org.example.viewer"))
        let descriptor = try ClientMessage(decoding: bytes(#"{"type":"open","id":"2","descriptor":true,"name":"1abc.pdb","mailbox":"Shared"}"#))
        #expect(descriptor == .openDescriptor(id: "2", name: "1abc.pdb", mailbox: "Shared"))
        #expect(descriptor.carriesDescriptor && descriptor.type == "open")
        #expect(try ClientMessage(decoding: bytes(#"{"type":"candidates","id":"4","descriptor":true,"name":"a.txt"}"#))
            == .candidatesDescriptor(id: "4", name: "a.txt"))
        // descriptor:false is the URL form.
        #expect(try ClientMessage(decoding: bytes(#"{"type":"candidates","descriptor":false,"url":"todolist://x"}"#))
            == .candidates(id: nil, url: "todolist://x"))
        for bad in [#"{"type":"open","id":"9","descriptor":true,"name":"../etc/passwd"}"#,
                    #"{"type":"open","id":"9","descriptor":true}"#,
                    #"{"type":"open","id":"9","descriptor":"yes","name":"a"}"#,
                    #"{"type":"candidates","id":"9"}"#] {
            #expect { try ClientMessage(decoding: bytes(bad)) } throws: { error in
                (error as? ProtocolError).map { $0.code == .badRequest && $0.requestID == "9" } ?? false
            }
        }
    }

    @Test func historyAndRedeliverCarryTheirQueryAndRefuseWhatCannotBeMeant() throws {
        let history = #"{"type":"history","id":"6","name":"notes.txt","bundleIdentifier":"org.example.viewer","since":"2026-11-26T10:02:00Z","state":"declined","limit":5}"#
        let message = try ClientMessage(decoding: bytes(history))
        #expect(message == .history(id: "6", query: HistoryRequest(name: "notes.txt", bundleIdentifier: "org.example.viewer",
                                                                   since: "2026-11-26T10:02:00Z", state: "declined", limit: 5)))
        #expect(text(message.encodedLine()) == history + "\n")
        #expect(try ClientMessage(decoding: bytes(#"{"type":"history","id":"6"}"#)) == .history(id: "6", query: HistoryRequest()))
        #expect(throws: ProtocolError.self) { try ClientMessage(decoding: bytes(#"{"type":"history","limit":0}"#)) }
        #expect(try ClientMessage(decoding: bytes(#"{"type":"redeliver","id":"7","declined":true,"bundleIdentifier":"org.example.viewer"}"#))
                == .redeliver(id: "7", deliveryIDs: [], declined: true, bundleIdentifier: "org.example.viewer"))
        for bad in [#"{"type":"redeliver"}"#, #"{"type":"redeliver","deliveryIDs":[]}"#, #"{"type":"redeliver","deliveryIDs":[1]}"#,
                    #"{"type":"redeliver","deliveryIDs":["a"],"declined":true}"#] {
            #expect(throws: ProtocolError.self, "\(bad)") { try ClientMessage(decoding: bytes(bad)) }
        }
    }

    @Test func releaseNamesAQuarantineEntryAndOptionallyAHandler() throws {
        let line = #"{"type":"release","id":"5","path":"/var/spool/docroute/quarantine/INBOX/1700000001.M2P1.host_part2.mailpart","bundleIdentifier":"org.example.viewer"}"#
        let message = try ClientMessage(decoding: bytes(line))
        #expect(message == .release(id: "5", path: "/var/spool/docroute/quarantine/INBOX/1700000001.M2P1.host_part2.mailpart", bundleIdentifier: "org.example.viewer"))
        #expect(message.type == "release" && message.id == "5" && !message.carriesDescriptor)
        #expect(text(message.encodedLine()) == line + "\n")
        #expect(try ClientMessage(decoding: bytes(#"{"type":"release","path":"/q/INBOX/a.mailpart"}"#)) == .release(id: nil, path: "/q/INBOX/a.mailpart"))
        #expect { try ClientMessage(decoding: bytes(#"{"type":"release","id":"9"}"#)) } throws: { error in
            (error as? ProtocolError).map { $0.code == .badRequest && $0.requestID == "9" } ?? false
        }
    }

    @Test func unknownFieldsAreIgnored() throws {
        let line = #"{"x-trace":{"a":[1,null]},"type":"ack","deliveryID":"d1","handled":true,"future":null}"#
        #expect(try ClientMessage(decoding: bytes(line)) == .ack(deliveryID: "d1", handled: true))
    }

    @Test func nullOptionalFieldReadsAsAbsent() throws {
        let line = #"{"type":"open","url":"file:///a","mailbox":null}"#
        #expect(try ClientMessage(decoding: bytes(line)) == .open(id: nil, url: "file:///a", mailbox: nil))
    }

    @Test func decodesFromAByteSliceWithoutTheNewline() throws {
        let buffer = bytes("{\"type\":\"status\",\"id\":\"9\"}\n")
        #expect(try ClientMessage(decoding: buffer.dropLast()) == .status(id: "9"))
    }

    struct BadLine: Sendable, CustomTestStringConvertible {
        let line: [UInt8]
        let message: String
        let requestID: String?
        var testDescription: String { message }

        init(_ line: String, _ message: String, id: String? = nil) {
            self.init(bytes: bytes(line), message, id: id)
        }

        init(bytes line: [UInt8], _ message: String, id: String? = nil) {
            self.line = line
            self.message = message
            self.requestID = id
        }
    }

    static let badLines: [BadLine] = [
        BadLine("hello", "the line is not valid JSON; send one JSON object per line"),
        BadLine(#"{"type":"status""#, "the line is not valid JSON; send one JSON object per line"),
        BadLine("", "the line is empty; send one JSON object per line"),
        BadLine(bytes: [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D], "the line is not valid UTF-8; messages are UTF-8 JSON"),
        BadLine(#"["type","status"]"#, "the line is a JSON array, not an object; every message is a JSON object"),
        BadLine(#"{"id":"4"}"#, "the message has no 'type' field", id: "4"),
        BadLine(#"{"type":7,"id":"5"}"#, "field 'type' must be a string, found integer", id: "5"),
        BadLine(
            #"{"type":"launch","id":"6"}"#,
            "unknown message type 'launch'; expected one of hello, subscribe, ack, open, candidates, status, release, history, redeliver", id: "6"),
        BadLine(#"{"type":"subscribe","id":"7"}"#, "'subscribe' is missing field 'bundleIdentifier'", id: "7"),
        BadLine(
            #"{"type":"subscribe","id":"8","bundleIdentifier":42}"#,
            "field 'bundleIdentifier' of 'subscribe' must be a string, found integer", id: "8"),
        BadLine(#"{"type":"hello","protocol":"1"}"#, "field 'protocol' of 'hello' must be an integer, found string"),
        BadLine(#"{"type":"hello","protocol":1.5}"#, "field 'protocol' of 'hello' must be an integer, found number"),
        BadLine(#"{"type":"hello"}"#, "'hello' is missing field 'protocol'"),
        BadLine(#"{"type":"ack","deliveryID":"d"}"#, "'ack' is missing field 'handled'"),
        BadLine(#"{"type":"ack","deliveryID":"d","handled":1}"#, "field 'handled' of 'ack' must be a boolean, found integer"),
        BadLine(#"{"type":"ack","handled":true,"id":"9"}"#, "'ack' is missing field 'deliveryID'", id: "9"),
        BadLine(#"{"type":"open","id":"10","url":null}"#, "'open' is missing field 'url'", id: "10"),
        BadLine(#"{"type":"open","url":"file:///a","mailbox":["M"]}"#, "field 'mailbox' of 'open' must be a string, found array"),
        BadLine(#"{"type":"status","id":3}"#, "field 'id' must be a string, found integer"),
    ]

    @Test(arguments: badLines)
    func badRequestNamesTheProblemAndEchoesTheID(_ bad: BadLine) throws {
        let error = #expect(throws: ProtocolError.self) { try ClientMessage(decoding: bad.line) }
        #expect(error?.code == .badRequest)
        #expect(error?.message == bad.message)
        #expect(error?.requestID == bad.requestID)
        if let error {
            let reply = text(DaemonMessage.error(error).encodedLine())
            let idField = bad.requestID.map { #","id":"\#($0)""# } ?? ""
            #expect(reply.hasPrefix(#"{"type":"error"\#(idField),"code":"bad-request","message":"#))
        }
    }

    @Test func lineTooLongIsABadRequestTheDaemonCanSend() {
        let reply = DaemonMessage.error(ProtocolError.lineTooLong())
        #expect(
            text(reply.encodedLine())
                == #"{"type":"error","code":"bad-request","message":"line longer than 1048576 bytes; a message must fit on one line of at most 1 MiB"}"#
                + "\n")
    }

    @Test(arguments: [
        ClientMessage.hello(protocol: 1, id: "h"),
        .subscribe(id: nil, bundleIdentifier: "org.example.ünïcode"),
        .ack(deliveryID: "d\"quoted\"", handled: true),
        .open(id: "o", url: "file:///srv/a%20b.pdb", mailbox: "Boîte"),
        .status(id: "s/1"),
    ])
    func everyRequestRoundTrips(_ message: ClientMessage) throws {
        let line = message.encodedLine()
        #expect(line.last == UInt8(ascii: "\n"))
        #expect(try ClientMessage(decoding: line.dropLast()) == message)
    }

    @Test func encodesOmittingAbsentOptionals() {
        #expect(text(ClientMessage.hello(protocol: 1).encodedLine()) == "{\"type\":\"hello\",\"protocol\":1}\n")
        #expect(
            text(ClientMessage.ack(deliveryID: "d", handled: true, id: "a1").encodedLine())
                == "{\"type\":\"ack\",\"id\":\"a1\",\"deliveryID\":\"d\",\"handled\":true}\n")
        #expect(text(ClientMessage.status(id: nil).encodedLine()) == "{\"type\":\"status\"}\n")
    }
}
