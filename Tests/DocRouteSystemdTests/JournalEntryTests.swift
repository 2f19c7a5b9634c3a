import DocRouteSystemd
import Logging
import Testing

@Suite struct JournalEntryTests {
    @Test func entryHoldsTheStandardFieldsInOrder() {
        let entry = JournalEntry(
            level: .warning,
            message: "copy failed",
            metadata: ["bundle-id": "com.sunsetlakesoftware.molecules", "mailbox": "Mail"],
            label: "docroute.delivery",
            source: "DocRouteDelivery",
            file: "DocRouteDelivery/DeliveryBatch.swift",
            function: "deliver(_:)",
            line: 42,
            syslogIdentifier: "docrouted"
        )
        #expect(
            entry.assignments == [
                "MESSAGE=copy failed",
                "PRIORITY=4",
                "SYSLOG_IDENTIFIER=docrouted",
                "CODE_FILE=DocRouteDelivery/DeliveryBatch.swift",
                "CODE_LINE=42",
                "CODE_FUNC=deliver(_:)",
                "DOCROUTE_BUNDLE_ID=com.sunsetlakesoftware.molecules",
                "DOCROUTE_MAILBOX=Mail",
                "DOCROUTE_LOGGER=docroute.delivery",
                "DOCROUTE_SOURCE=DocRouteDelivery",
            ])
    }

    @Test(arguments: [
        (Logger.Level.trace, 7), (.debug, 7), (.info, 6), (.notice, 5), (.warning, 4), (.error, 3), (.critical, 2),
    ])
    func priorityFollowsSyslog(level: Logger.Level, priority: Int) {
        #expect(JournalEntry.priority(for: level) == priority)
        let entry = JournalEntry(level: level, message: "m", file: "f", function: "g", line: 1, syslogIdentifier: "x")
        #expect(entry[.priority] == [String(priority)])
    }

    @Test(arguments: [
        ("bundle-id", "DOCROUTE_BUNDLE_ID"),
        ("bundleIdentifier", "DOCROUTE_BUNDLE_ID"),
        ("bundleID", "DOCROUTE_BUNDLE_ID"),
        ("delivery-id", "DOCROUTE_DELIVERY_ID"),
        ("deliveryID", "DOCROUTE_DELIVERY_ID"),
        ("mailbox", "DOCROUTE_MAILBOX"),
        ("path", "DOCROUTE_PATH"),
        ("original-name", "DOCROUTE_ORIGINAL_NAME"),
        ("mail-message-id", "DOCROUTE_MAIL_MESSAGE_ID"),
        ("mail-part", "DOCROUTE_MAIL_PART"),
    ])
    func docrouteKeysBecomeDocrouteFields(key: String, field: String) {
        #expect(JournalField(metadataKey: key).name == field)
    }

    /// A document's log lines carry these keys, so `journalctl DOCROUTE_DELIVERY_ID=…` finds each
    /// line of its story, and each names the document as it came.
    @Test func aDocumentLineBecomesItsDeliveryIDAndOriginalNameFields() {
        let entry = JournalEntry(
            level: .info, message: "acknowledged",
            metadata: [
                "delivery-id": "1f0c8a52-8e0e-4a55-9d55-4a1f5e2b7c01", "original-name": "1abc.pdb",
                "bundle-id": "com.sunsetlakesoftware.molecules", "mail-message-id": "<sheet@example.org>", "mail-part": "2",
            ],
            file: "f", function: "g", line: 1, syslogIdentifier: "docrouted")
        #expect(entry[.docrouteDeliveryID] == ["1f0c8a52-8e0e-4a55-9d55-4a1f5e2b7c01"])
        #expect(entry[.docrouteOriginalName] == ["1abc.pdb"])
        #expect(entry.assignments.contains("DOCROUTE_DELIVERY_ID=1f0c8a52-8e0e-4a55-9d55-4a1f5e2b7c01"))
        #expect(entry.assignments.contains("DOCROUTE_ORIGINAL_NAME=1abc.pdb"))
        #expect(entry.assignments.contains("DOCROUTE_MAIL_MESSAGE_ID=<sheet@example.org>"))
        #expect(entry.assignments.contains("DOCROUTE_MAIL_PART=2"))
        #expect(entry.assignments.allSatisfy { JournalField.isValid(String($0.prefix { $0 != "=" })) })
    }

    @Test func docrouteFieldConstantsHaveTheDocumentedNames() {
        #expect(JournalField.docrouteBundleID.name == "DOCROUTE_BUNDLE_ID")
        #expect(JournalField.docrouteDeliveryID.name == "DOCROUTE_DELIVERY_ID")
        #expect(JournalField.docrouteMailbox.name == "DOCROUTE_MAILBOX")
        #expect(JournalField.docroutePath.name == "DOCROUTE_PATH")
        #expect(JournalField.messageID.name == "MESSAGE_ID")
        #expect(JournalField.codeFunction.name == "CODE_FUNC")
    }

    @Test(arguments: [
        ("error", "ERROR"),
        ("error.kind", "ERROR_KIND"),
        ("httpStatusCode", "HTTP_STATUS_CODE"),
        ("_private", "PRIVATE"),
        ("__trusted_uid", "TRUSTED_UID"),
        ("a--b", "A_B"),
        ("trailing-", "TRAILING"),
        ("héllo wörld", "H_LLO_W_RLD"),
        ("2fa", "DOCROUTE_2FA"),
        ("---", "DOCROUTE_FIELD"),
        ("", "DOCROUTE_FIELD"),
        // Keys must not forge the fields the handler itself writes.
        ("message", "DOCROUTE_MESSAGE"),
        ("priority", "DOCROUTE_PRIORITY"),
        ("code_file", "DOCROUTE_CODE_FILE"),
        ("syslog-identifier", "DOCROUTE_SYSLOG_IDENTIFIER"),
        ("messageID", "DOCROUTE_MESSAGE_ID"),
    ])
    func metadataKeysAreSanitised(key: String, field: String) {
        let sanitised = JournalField(metadataKey: key)
        #expect(sanitised.name == field)
        #expect(JournalField.isValid(sanitised.name))
    }

    @Test func longKeysAreCutToSixtyFourCharacters() {
        let field = JournalField(metadataKey: String(repeating: "abc", count: 40))
        #expect(field.name.count == 64)
        #expect(field.name == String(String(repeating: "ABC", count: 40).prefix(64)))
        #expect(JournalField.isValid(field.name))
    }

    @Test func validityFollowsJournaldsRules() {
        #expect(JournalField.isValid("DOCROUTE_PATH"))
        #expect(JournalField.isValid("A1"))
        #expect(!JournalField.isValid(""))
        #expect(!JournalField.isValid("_UID"))
        #expect(!JournalField.isValid("1ABC"))
        #expect(!JournalField.isValid("lower"))
        #expect(!JournalField.isValid("WITH-DASH"))
        #expect(!JournalField.isValid(String(repeating: "A", count: 65)))
        #expect(JournalField(validating: "MAILBOX")?.name == "MAILBOX")
        #expect(JournalField(validating: "_PID") == nil)
    }

    @Test(arguments: [
        (DocRouteMessageID.delivered, "delivered"),
        (.quarantined, "quarantined"),
        (.handlerLaunched, "handler-launched"),
    ])
    func messageIDMetadataBecomesMessageIDField(id: DocRouteMessageID, name: String) {
        #expect(id.name == name)
        let entry = JournalEntry(
            level: .info, message: "m", metadata: [DocRouteMessageID.metadataKey: id.metadataValue],
            file: "f", function: "g", line: 1, syslogIdentifier: "docrouted")
        #expect(entry[.messageID] == [id.id128])
        #expect(entry[JournalField(metadataKey: "message-id")].isEmpty)
        #expect(entry.assignments.contains("MESSAGE_ID=\(id.id128)"))
    }

    @Test func messageIDAcceptsTheHexIDItself() {
        let entry = JournalEntry(
            level: .info, message: "m", metadata: ["message-id": "35aa6a7327534f0192f371f2d4e78602"],
            file: "f", function: "g", line: 1, syslogIdentifier: "docrouted")
        #expect(entry[.messageID] == ["35aa6a7327534f0192f371f2d4e78602"])
    }

    @Test func unknownMessageIDIsKeptButNotAsMessageID() {
        let entry = JournalEntry(
            level: .info, message: "m", metadata: ["message-id": "frobnicated"],
            file: "f", function: "g", line: 1, syslogIdentifier: "docrouted")
        #expect(entry[.messageID].isEmpty)
        #expect(entry.assignments.contains("DOCROUTE_MESSAGE_ID=frobnicated"))
    }

    @Test func messageIDsAreFixedDistinct128BitHex() {
        let ids = DocRouteMessageID.all.map(\.id128)
        #expect(ids == [
            "31669d38d12b455bb3404bef73eefbfa", "35aa6a7327534f0192f371f2d4e78602",
            "be4388ca850546659d3b6865e29c6598",
        ])
        #expect(Set(ids).count == ids.count)
        for id in ids {
            #expect(id.count == 32)
            #expect(id.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) })
        }
        #expect(DocRouteMessageID(metadataValue: "handler-launched") == .handlerLaunched)
        #expect(DocRouteMessageID(metadataValue: "Delivered") == nil)
    }

    @Test func valuesKeepLineBreaksAndNestedValuesAreText() {
        let entry = JournalEntry(
            level: .error, message: "first\nsecond",
            metadata: ["path": "/var/spool/docroute/drop/a b.pdb", "sizes": [.stringConvertible(1), "2"]],
            error: SystemdError(code: .notifyFailed, message: "no socket"),
            file: "f", function: "g", line: 1, syslogIdentifier: "docrouted")
        #expect(entry[.message] == ["first\nsecond"])
        #expect(entry[.docroutePath] == ["/var/spool/docroute/drop/a b.pdb"])
        #expect(entry[JournalField(metadataKey: "sizes")] == ["[\"1\", \"2\"]"])
        #expect(entry[.docrouteError].first?.hasPrefix("[notify-failed] no socket") == true)
    }

    @Test func metadataIsSortedSoEntriesAreReproducible() {
        let entry = JournalEntry(
            level: .info, message: "m", metadata: ["zeta": "1", "alpha": "2", "mailbox": "3"],
            file: "f", function: "g", line: 1, syslogIdentifier: "docrouted")
        let metadataNames = entry.fields.dropFirst(6).map(\.name.name)
        #expect(metadataNames == ["ALPHA", "DOCROUTE_MAILBOX", "ZETA"])
    }

    @Test func handlerMergesItsMetadataProviderAndCallSiteInThatOrder() {
        var handler = JournalLogHandler(
            label: "docroute.test", syslogIdentifier: "docroute-test", logLevel: .debug,
            metadataProvider: Logger.MetadataProvider { ["mailbox": "FromProvider", "path": "/provided"] })
        handler[metadataKey: "mailbox"] = "FromHandler"
        handler[metadataKey: "bundle-id"] = "com.example.handler"
        let event = LogEvent(
            level: .notice, message: "delivered", metadata: ["path": "/explicit", "message-id": "delivered"],
            source: "DocRouteDelivery", file: "DocRouteDelivery/DeliveryBatch.swift", function: "run()", line: 7)
        let entry = handler.entry(for: event)
        #expect(entry[.syslogIdentifier] == ["docroute-test"])
        #expect(entry[.priority] == ["5"])
        #expect(entry[.docrouteMailbox] == ["FromProvider"])
        #expect(entry[.docroutePath] == ["/explicit"])
        #expect(entry[.docrouteBundleID] == ["com.example.handler"])
        #expect(entry[.messageID] == [DocRouteMessageID.delivered.id128])
        #expect(entry[.codeLine] == ["7"])
        #expect(entry[.docrouteLogger] == ["docroute.test"])
    }
}
