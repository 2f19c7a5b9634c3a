@testable import DocRouteConfiguration
@testable import DocRouteIntake
import DocRouteMail
@testable import DocRouteMaildir
@testable import DocRoutePlatform
import DocRouteProtocol
import DocRouteTestSupport
import Foundation
import Logging
import SystemPackage
import Testing

/// A Maildir filled the way an MDA fills one (Python's mailbox.Maildir), read back through the
/// pieces the intake uses: the layout, the extractor, the read-name rename.
@Suite struct MaildirExtractionTests {
    struct Delivered: Decodable {
        var name: String
        var expected: String
    }

    static let logger = Logger(label: "test.maildir")

    func openFolder(_ path: String) throws -> FileDescriptor {
        try FileDescriptor.openDirectory(atPath: FilePath(path))
    }

    @Test func everyAttachmentOfEveryMailboxArrivesAndTheMessageEndsRead() throws {
        try TemporaryFolder.with("mail") { temporary in
            let folder = temporary.string
            let root = folder + "/Maildir"
            let scratchPath = folder + "/scratch"
            try FileManager.default.createDirectory(atPath: scratchPath, withIntermediateDirectories: false)
            let data = try Fixtures.python("compose.py", ["maildir", root, folder + "/expected"])
            let delivered = try JSONDecoder().decode([String: [Delivered]].self, from: data)
            // A delivery in progress sits in tmp/: it must never be taken.
            try Data("From: partial\r\n".utf8).write(to: URL(fileURLWithPath: root + "/tmp/1.partial.host"))

            let rootFD = try openFolder(root)
            defer { try? rootFD.close() }
            let mailboxes = try MaildirLayout.mailboxes(in: rootFD.rawValue)
            #expect(mailboxes.map(\.name) == ["INBOX", "Work.Reports", "Été"])
            #expect(mailboxes.map(\.newPath) == ["new", ".Work.Reports/new", ".&AMk-t&AOk-/new"])

            let scratch = try openFolder(scratchPath)
            defer { try? scratch.close() }
            let extractor = MaildirAttachmentExtractor(scratch: scratch, scratchPath: scratchPath, logger: Self.logger)
            var total = 0
            for mailbox in mailboxes {
                let newFolder = try openFolder(root + "/" + mailbox.newPath)
                let curFolder = try openFolder(root + "/" + mailbox.curPath)
                defer {
                    try? newFolder.close()
                    try? curFolder.close()
                }
                let names = try newFolder.directoryEntries().map(\.nameBytes).filter(MaildirMessageName.isMessage)
                let expectedMessages = try #require(delivered[mailbox.name])
                #expect(Set(names.map { String(decoding: $0, as: UTF8.self) }) == Set(expectedMessages.map(\.name)))
                for message in expectedMessages {
                    let name = Array(message.name.utf8)
                    let file = try IntakeFile.open(name: name, in: newFolder.rawValue, maxSize: .max).get()
                    let extraction = try extractor.extract(message: FileDescriptor(rawValue: file.descriptor), messagePath: root + "/" + mailbox.newPath + "/" + message.name)
                    close(file.descriptor)
                    let expected = try Fixtures.Expectation.load(message.expected)
                    #expect(!extraction.summary.isMalformed)
                    #expect(extraction.oversized.isEmpty)
                    #expect(extraction.attachments.map(\.partPath) == expected.attachments.map(\.partPath))
                    for (attachment, wanted) in zip(extraction.attachments, expected.attachments) {
                        #expect(try readFile(attachment.temporaryPath) == (try expected.payload(wanted)), "\(mailbox.name) part \(wanted.partPath)")
                        #expect(attachment.fileName == wanted.expectedFileName)
                        #expect(attachment.mimeType == wanted.mimeType)
                        #expect(attachment.size == Int64(try expected.payload(wanted).count))
                        #expect(attachment.temporaryName.hasPrefix(".docroute-mail-"))
                        let status = try FileManager.default.attributesOfItem(atPath: attachment.temporaryPath)
                        #expect((status[.posixPermissions] as? NSNumber)?.intValue == 0o600)
                        let annotation = attachment.annotation
                        #expect(annotation["from"] == expected.envelope.from.map(PropertyListValue.string))
                        #expect(annotation["subject"] == expected.envelope.subject.map(PropertyListValue.string))
                        #expect(annotation["messageID"] == expected.envelope.messageID.map(PropertyListValue.string))
                        #expect(annotation["date"] == expected.envelope.date.map(PropertyListValue.string))
                        #expect(annotation["originalFilename"] == .string(wanted.fileName ?? attachment.fileName))
                        #expect(annotation["partPath"] == .string(wanted.partPath))
                        total += 1
                    }
                    extraction.removeTemporaryFiles(in: scratch)
                    let outcome = try MaildirMessageName.markRead(name, newFolder: newFolder, curFolder: curFolder, describing: message.name)
                    #expect(outcome == .moved(to: Array((message.name + ":2,S").utf8)))
                }
                #expect(try newFolder.directoryEntries().isEmpty)
            }
            // Each rich message: seven attachments and the forwarded message as an .eml.
            #expect(total == 8 + 3 + 8 + 3)
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratchPath).isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/tmp") == ["1.partial.host"])

            // A mail client (Python's mailbox here) sees every message read, in cur/.
            struct Seen: Decodable, Equatable {
                var subdir: String
                var flags: String
            }
            let flags = try JSONDecoder().decode([String: [Seen]].self, from: try Fixtures.python("compose.py", ["flags", root]))
            #expect(flags["INBOX"] == [Seen(subdir: "cur", flags: "S")])
            #expect(flags["&AMk-t&AOk-"] == [Seen(subdir: "cur", flags: "S")])
            #expect(flags["Work.Reports"] == [Seen(subdir: "cur", flags: "S"), Seen(subdir: "cur", flags: "S")])
        }
    }

    func withRichMessage(_ body: (_ message: FileDescriptor, _ scratch: FileDescriptor, _ scratchPath: String, _ expected: Fixtures.Expectation) throws -> Void) throws {
        try TemporaryFolder.with("mail") { temporary in
            let folder = temporary.string
            try Fixtures.python("compose.py", ["message", "rich", folder + "/rich"])
            let scratchPath = folder + "/scratch"
            try FileManager.default.createDirectory(atPath: scratchPath, withIntermediateDirectories: false)
            let scratch = try openFolder(scratchPath)
            defer { try? scratch.close() }
            let message = try FileDescriptor.open(FilePath(folder + "/rich/message.eml"), .readOnly)
            defer { try? message.close() }
            try body(message, scratch, scratchPath, try Fixtures.Expectation.load(folder + "/rich"))
        }
    }

    @Test func unwantedAndOversizedAttachmentsLeaveNoFiles() throws {
        try withRichMessage { message, scratch, scratchPath, expected in
            let extractor = MaildirAttachmentExtractor(scratch: scratch, scratchPath: scratchPath, maximumAttachmentSize: 25_000, logger: Self.logger)
            let extraction = try extractor.extract(message: message, messagePath: "rich.eml") { $0.partPath != "6" }
            #expect(extraction.attachments.map(\.partPath) == ["3", "4", "7.3"])
            // The forwarded message (part 7, about 69 KB as an .eml) is over the limit too.
            #expect(extraction.oversized.map(\.partPath) == ["2", "5", "7.2", "7"])
            #expect(extraction.summary.attachments.count == 8)
            let files = try FileManager.default.contentsOfDirectory(atPath: scratchPath).sorted()
            #expect(files == extraction.attachments.map(\.temporaryName).sorted())
            let four = try #require(expected.attachments.first { $0.partPath == "4" })
            #expect(try readFile(extraction.attachments[1].temporaryPath) == (try expected.payload(four)))
            extraction.removeTemporaryFiles(in: scratch)
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratchPath).isEmpty)
        }
    }

    @Test func failuresThrowDeliveryErrorsAndLeaveNothingBehind() throws {
        try withRichMessage { message, scratch, scratchPath, _ in
            let broken = MaildirAttachmentExtractor(scratch: FileDescriptor(rawValue: -1), scratchPath: "/nowhere", logger: Self.logger)
            let error = try #require(throws: DeliveryError.self) { try broken.extract(message: message, messagePath: "rich.eml") }
            #expect(error.errno == .badFileDescriptor)
            #expect(error.message.contains("create temporary file"))

            let extractor = MaildirAttachmentExtractor(scratch: scratch, scratchPath: scratchPath, logger: Self.logger)
            let unreadable = try #require(throws: DeliveryError.self) {
                try extractor.extract(message: FileDescriptor(rawValue: -1), messagePath: "gone.eml")
            }
            #expect(unreadable.message.contains(" gone.eml: "))
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratchPath).isEmpty)
        }
    }

    /// Extracts a hand-written message of Fixtures/defects into a scratch folder.
    func extractDefect(_ name: String, _ body: (MaildirExtraction, [UInt8]) throws -> Void) throws {
        try TemporaryFolder.with("mail") { temporary in
            let folder = temporary.string
            let scratchPath = folder + "/scratch"
            try FileManager.default.createDirectory(atPath: scratchPath, withIntermediateDirectories: false)
            let scratch = try openFolder(scratchPath)
            defer { try? scratch.close() }
            let path = Fixtures.mailFolder + "/defects/" + name
            let message = try FileDescriptor.open(FilePath(path), .readOnly)
            defer { try? message.close() }
            let extractor = MaildirAttachmentExtractor(scratch: scratch, scratchPath: scratchPath, logger: Self.logger)
            let extraction = try extractor.extract(message: message, messagePath: path)
            defer { extraction.removeTemporaryFiles(in: scratch) }
            try body(extraction, try readFile(path))
        }
    }

    @Test func attachedMessagesBecomeEmlScratchFilesInMessageOrder() throws {
        try extractDefect("attached-message.eml") { extraction, message throws in
            #expect(extraction.attachments.map(\.partPath) == ["2", "2.2", "3", "4"])
            #expect(extraction.attachments.map(\.fileName) == ["Original report.eml", "report.pdf", "Re: lunch?.eml", "message.eml"])
            #expect(extraction.attachments.map(\.mimeType) == ["message/rfc822", "application/pdf", "message/rfc822", "message/rfc822"])
            // The .eml holds exactly the bytes of the attached message, as the parser located them.
            for (attachment, record) in zip(extraction.attachments, extraction.summary.attachments) where record.isAttachedMessage {
                let range = try #require(record.byteRange)
                let bytes = try readFile(attachment.temporaryPath)
                #expect(bytes == Array(message[Int(range.lowerBound)..<Int(range.upperBound)]))
                #expect(attachment.size == Int64(bytes.count))
            }
            #expect(String(decoding: try readFile(extraction.attachments[2].temporaryPath), as: UTF8.self).hasSuffix("Yes, at noon."))
            #expect(extraction.attachments[2].annotation["originalFilename"] == .string("Re: lunch?.eml"))
            #expect(!extraction.nothingRecoverable)
        }
    }

    @Test func aMessageIsUnrecoverableOnlyWhenNothingInItDecodes() throws {
        try extractDefect("nothing-recoverable.eml") { extraction, _ throws in
            #expect(extraction.attachments.map(\.size) == [0])
            #expect(extraction.attachments.map(\.isUnrecoverable) == [true])
            #expect(extraction.nothingRecoverable)
        }
        try extractDefect("single-character-tail.eml") { extraction, _ throws in
            #expect(extraction.attachments.map(\.isUnrecoverable) == [false, true])
            #expect(try readFile(extraction.attachments[0].temporaryPath) == Array("Hello world!".utf8))
            #expect(!extraction.nothingRecoverable)
        }
        try extractDefect("missing-padding.eml") { extraction, _ throws in
            #expect(extraction.attachments.map(\.damage) == [.badPadding, .badPadding, []])
            #expect(extraction.attachments.map(\.size) == [301, 302, 83])
            #expect(!extraction.nothingRecoverable)
        }
    }

    @Test func messageThatDisappearsIsNotAnError() throws {
        try TemporaryFolder.with("mail") { temporary in
            let folder = temporary.string
            for sub in ["new", "cur", "tmp"] {
                try FileManager.default.createDirectory(atPath: folder + "/" + sub, withIntermediateDirectories: false)
            }
            let newFolder = try openFolder(folder + "/new")
            let curFolder = try openFolder(folder + "/cur")
            defer {
                try? newFolder.close()
                try? curFolder.close()
            }
            let name = Array("1.gone.host".utf8)
            #expect(IntakeFile.open(name: name, in: newFolder.rawValue, maxSize: .max).failureValue == .vanished)
            #expect(try MaildirMessageName.markRead(name, newFolder: newFolder, curFolder: curFolder, describing: "gone") == .vanished)

            // A name already taken in cur/ is never replaced.
            try Data("a".utf8).write(to: URL(fileURLWithPath: folder + "/new/2.host"))
            try Data("b".utf8).write(to: URL(fileURLWithPath: folder + "/cur/2.host:2,S"))
            #expect(try MaildirMessageName.markRead(Array("2.host".utf8), newFolder: newFolder, curFolder: curFolder, describing: "2") == .nameTaken(Array("2.host:2,S".utf8)))
            #expect(try readFile(folder + "/cur/2.host:2,S") == Array("b".utf8))
            #expect(FileManager.default.fileExists(atPath: folder + "/new/2.host"))
        }
    }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let failure) = self { failure } else { nil }
    }
}
