import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a new administrator found walking through docroute, through the built docrouted,
/// docroutectl and `docrouted --check`: a copied manifest, a user that does not exist, a
/// misspelled key, a default for a handler that cannot open the type, and a dropped folder.
@Suite(.serialized) struct AdministratorWalkthroughIntegrationTests {
    static let pdfviewer = "org.docroute.pdfviewer"
    static let textviewer = "org.docroute.textviewer"
    static let molecules = "com.sunsetlakesoftware.molecules"
    static let pdf = Array("%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n".utf8)

    /// A manifest claiming `types` (LSItemContentTypes) with `rank`, as `user`.
    static func manifest(_ bundle: String, types: [String], rank: String = "Default", user: String = "root", extra: String = "") -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        <key>CFBundleIdentifier</key><string>\(bundle)</string>
        <key>CFBundleDocumentTypes</key><array><dict>
        <key>CFBundleTypeRole</key><string>Viewer</string>
        <key>LSHandlerRank</key><string>\(rank)</string>
        <key>LSItemContentTypes</key><array>\(types.map { "<string>\($0)</string>" }.joined())</array>
        </dict></array>
        <key>DocRouteUser</key><string>\(user)</string>
        \(extra)
        </dict></plist>
        """
    }

    func status(_ harness: DaemonHarness) throws -> [String: Any] {
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "status", "id": "s"])
        return try #require(client.readMessage())
    }

    func handler(_ bundle: String, in status: [String: Any]) -> [String: Any]? {
        (status["handlers"] as? [[String: Any]] ?? []).first { $0["bundleIdentifier"] as? String == bundle }
    }

    // A copy of a live handler's manifest is refused; the live handler keeps its pending
    // documents and keeps receiving new ones, across a restart too; docroutectl and --check say
    // which file is refused and why.
    @Test func aCopiedManifestIsRefusedAndTheLiveHandlerKeepsServing() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        for index in 1...3 { try harness.drop("before-\(index).pdf", Self.pdf) }
        #expect(harness.waitFor(harness.sandbox(Self.pdfviewer) + "/before-3.pdf"), "\(harness.daemonLog.suffix(2000))")
        #expect(harness.waitUntil { (try? handler(Self.pdfviewer, in: status(harness))?["pending"] as? Int) == 3 })

        // As the administrator did: cp pdfviewer.plist handlers.d/zz-b3.plist (no rename).
        let copy = harness.handlers + "/zz-b3.plist"
        let original = harness.handlers + "/pdfviewer.plist"
        try FileManager.default.copyItem(atPath: original, toPath: copy)
        #expect(harness.waitUntil { ((try? status(harness))?["failedManifests"] as? [String])?.isEmpty == false }, "\(harness.daemonLog.suffix(2000))")
        let report = try status(harness)
        #expect(handler(Self.pdfviewer, in: report)?["pending"] as? Int == 3, "the live handler and its pending documents stay: \(report)")
        let failed = report["failedManifests"] as? [String] ?? []
        #expect(failed.contains { $0.contains(copy) && $0.contains(original) && $0.contains("keeps serving") }, "\(failed)")
        let logged = harness.daemonLog.split(separator: "\n").first { $0.contains("zz-b3.plist") && $0.contains("refused") }.map(String.init) ?? ""
        #expect(logged.contains("warning") && logged.contains("pdfviewer.plist"), "the refusal is a warning naming both files: \(logged)")

        try harness.drop("after.pdf", Self.pdf)
        #expect(harness.waitFor(harness.sandbox(Self.pdfviewer) + "/after.pdf"), "new PDFs still go to the live handler: \(harness.daemonLog.suffix(2000))")

        let listing = try CtlProcess.run(["handlers", "--config", harness.configPath])
        #expect(listing.status == 1, "a refused manifest is a failure to fix: \(listing.output)")
        #expect(listing.output.contains("FAILED  \(copy): CFBundleIdentifier: '\(Self.pdfviewer)' is declared by \(original) too, which was loaded before and keeps serving; this file is refused"),
                "\(listing.output)")
        #expect(listing.output.split(separator: "\n").contains { $0.hasPrefix(Self.pdfviewer) && $0.contains("[\(original)]") }, "\(listing.output)")
        #expect(listing.output.contains("  warning CFBundleIdentifier: \(copy) declares '\(Self.pdfviewer)' too and is refused; this file, loaded before, keeps serving"),
                "\(listing.output)")

        let checked = try harness.check()
        #expect(checked.status == 0, "the live handler keeps delivery going: \(checked.output)")
        #expect(checked.output.split(separator: "\n").contains { $0.hasPrefix("warning") && $0.contains(copy) && $0.contains("this file is refused") },
                "\(checked.output)")

        // A restart keeps the handler that was serving.
        harness.stop()
        try harness.start()
        #expect(handler(Self.pdfviewer, in: try status(harness))?["pending"] as? Int == 4, "\(harness.daemonLog.suffix(2000))")

        // When neither was loaded before, neither loads: with the daemon stopped, the original
        // removed and a second copy added, both copies are newcomers.
        harness.stop()
        unlink(original)
        try FileManager.default.copyItem(atPath: copy, toPath: harness.handlers + "/zz-b4.plist")
        try harness.start()
        let after = try status(harness)
        #expect(handler(Self.pdfviewer, in: after) == nil, "\(after)")
        #expect((after["failedManifests"] as? [String] ?? []).filter { $0.contains("neither was loaded before") }.count == 2, "\(after)")
    }

    // DocRouteUser naming no user of this host fails the manifest, with the user, the file and
    // what to do; no document goes into its container.
    @Test func aDocRouteUserThatDoesNotExistFailsTheManifest() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let file = harness.handlers + "/ghost.plist"
        let user = "docroute-no-such-user"
        try Self.manifest("com.example.ghostviewer", types: ["com.adobe.pdf"], rank: "Owner", user: user)
            .write(toFile: file, atomically: true, encoding: .utf8)
        try harness.start()
        try harness.drop("report.pdf", Self.pdf)
        #expect(harness.waitFor(harness.sandbox(Self.pdfviewer) + "/report.pdf"), "\(harness.daemonLog.suffix(2000))")
        #expect(!FileManager.default.fileExists(atPath: harness.containers + "/com.example.ghostviewer"), "nothing is delivered as root into its container")
        let report = try status(harness)
        #expect(handler("com.example.ghostviewer", in: report) == nil)
        let failed = report["failedManifests"] as? [String] ?? []
        #expect(failed.contains { $0.contains(file) && $0.contains("DocRouteUser") && $0.contains("'\(user)' is not a user on this host") }, "\(failed)")
        #expect(harness.daemonLog.contains("'\(user)' is not a user on this host"), "\(harness.daemonLog.suffix(2000))")

        let listing = try CtlProcess.run(["handlers", "--config", harness.configPath])
        #expect(listing.status == 1)
        #expect(listing.output.contains("FAILED  \(file): DocRouteUser: '\(user)' is not a user on this host"), "\(listing.output)")
        #expect(listing.output.contains("useradd --system \(user)"), "it says what to do: \(listing.output)")
        let checked = try harness.check()
        #expect(checked.status == 1)
        #expect(checked.output.split(separator: "\n").contains { $0.hasPrefix("FAILED") && $0.contains(file) && $0.contains(user) }, "\(checked.output)")
    }

    // A misspelled key is a warning naming the key path and the likely key, at each level
    // docroute reads; a handler that claims nothing is a warning too; both in the log,
    // `docroutectl handlers` and `--check`.
    @Test func misspelledKeysAndAHandlerThatClaimsNothingAreWarnings() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let file = harness.handlers + "/b3.plist"
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>CFBundleIdentifier</key><string>com.example.b3</string>
            <key>CFBundleDocumentType</key><array><dict>
            <key>LSItemContentTypes</key><array><string>com.adobe.pdf</string></array>
            </dict></array>
            <key>CFBundleURLTypes</key><array><dict><key>CFBundleURLScheme</key><array><string>b3</string></array></dict></array>
            <key>UTImportedTypeDeclarations</key><array><dict>
            <key>UTTypeIdentifier</key><string>com.example.b3-note</string>
            <key>UTTypeConformTo</key><array><string>public.plain-text</string></array>
            <key>UTTypeTagSpecification</key><dict><key>public.filename-extention</key><string>b3n</string></dict>
            </dict></array>
            <key>DocRouteUsr</key><string>root</string>
            <key>CFBundleExecutable</key><string>b3</string>
            </dict></plist>
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let pdfviewer = try String(contentsOfFile: harness.handlers + "/pdfviewer.plist", encoding: .utf8)
        try pdfviewer.replacingOccurrences(of: "<key>CFBundleTypeExtensions</key>", with: "<key>CFBundleTypeExtension</key>")
            .write(toFile: harness.handlers + "/pdfviewer.plist", atomically: true, encoding: .utf8)
        let expected = [
            (file, "CFBundleDocumentType", "CFBundleDocumentTypes"),
            (file, "CFBundleURLTypes[0].CFBundleURLScheme", "CFBundleURLSchemes"),
            (file, "UTImportedTypeDeclarations[0].UTTypeConformTo", "UTTypeConformsTo"),
            (file, "UTImportedTypeDeclarations[0].UTTypeTagSpecification.public.filename-extention", "public.filename-extension"),
            (file, "DocRouteUsr", "DocRouteUser"),
            (harness.handlers + "/pdfviewer.plist", "CFBundleDocumentTypes[0].CFBundleTypeExtension", "CFBundleTypeExtensions"),
        ]

        let listing = try CtlProcess.run(["handlers", "--json", "--config", harness.configPath])
        #expect(listing.status == 0, "warnings only: \(listing.output)\(listing.error)")
        let warnings = ((try? JSONSerialization.jsonObject(with: Data(listing.output.utf8))) as? [String: Any])?["warnings"] as? [[String: Any]] ?? []
        for (path, keyPath, intended) in expected {
            #expect(warnings.contains { $0["file"] as? String == path && $0["keyPath"] as? String == keyPath && $0["code"] as? String == "misspelled-key"
                        && ($0["message"] as? String ?? "").contains("did you mean '\(intended)'") }, "\(keyPath): \(warnings)")
        }
        #expect(!warnings.contains { $0["keyPath"] as? String == "CFBundleExecutable" }, "a real Apple key is not taken for a misspelling")
        // The URL scheme was misspelled too, so b3 claims nothing; pdfviewer keeps its MIME claim.
        #expect(warnings.contains { $0["file"] as? String == file && $0["code"] as? String == "claims-nothing"
                    && ($0["message"] as? String ?? "").contains("com.example.b3 claims no document type and no URL scheme") }, "\(warnings)")
        #expect(!warnings.contains { $0["file"] as? String == harness.handlers + "/pdfviewer.plist" && $0["code"] as? String == "claims-nothing" })

        let text = try CtlProcess.run(["handlers", "--config", harness.configPath])
        #expect(text.output.contains("  warning CFBundleDocumentType: 'CFBundleDocumentType' is not a key docroute reads; did you mean 'CFBundleDocumentTypes'?"),
                "\(text.output)")
        let checked = try harness.check()
        #expect(checked.status == 0, "\(checked.output)")
        #expect(checked.output.split(separator: "\n").contains { $0.hasPrefix("warning") && $0.contains("\(file): CFBundleDocumentType: ") && $0.contains("did you mean") },
                "\(checked.output)")
        #expect(checked.output.split(separator: "\n").contains { $0.hasPrefix("warning") && $0.contains("claims no document type") }, "\(checked.output)")

        try harness.start()
        let line = harness.daemonLog.split(separator: "\n").first { $0.contains("did you mean 'CFBundleDocumentTypes'") }.map(String.init) ?? ""
        #expect(line.contains("warning") && line.contains(file), "\(harness.daemonLog.suffix(3000))")
        #expect(harness.daemonLog.contains("com.example.b3 claims no document type and no URL scheme"))
    }

    // `default set` refuses a handler that could never open the type and lists those that could;
    // it takes an extension and a MIME type and says which UTI it set; a default for a handler
    // that claims only a type the document conforms to (public.data) decides; `route` says so,
    // and says when a default is passed over.
    @Test func aDefaultDecidesWheneverItsHandlerCanOpenTheDocument() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try Self.manifest("com.example.hexviewer", types: ["public.data"], rank: "Alternate")
            .write(toFile: harness.handlers + "/hexviewer.plist", atomically: true, encoding: .utf8)
        let config = ["--config", harness.configPath]
        try harness.start()
        let defaultsFile = harness.root + "/state/defaults.json"

        let refused = try CtlProcess.run(["default", "set", "com.adobe.pdf", Self.textviewer] + config)
        #expect(refused.status != 0, "\(refused.output)")
        #expect(refused.error.contains("\(Self.textviewer) cannot open com.adobe.pdf"), "\(refused.error)")
        #expect(refused.error.contains("the handlers that could: \(Self.pdfviewer) (via com.adobe.pdf), com.example.hexviewer (via public.data)"), "\(refused.error)")
        #expect(!refused.output.contains("has taken the change"))
        #expect(!FileManager.default.fileExists(atPath: defaultsFile), "nothing was written")

        let byExtension = try CtlProcess.run(["default", "set", ".pdf", "com.example.hexviewer"] + config)
        #expect(byExtension.status == 0, "\(byExtension.error)")
        #expect(byExtension.output.contains("type com.adobe.pdf (from the extension .pdf) → com.example.hexviewer"), "\(byExtension.output)")
        #expect(byExtension.output.contains("has taken the change"), "\(byExtension.output)")
        try harness.drop("report.pdf", Self.pdf)
        #expect(harness.waitFor(harness.sandbox("com.example.hexviewer") + "/report.pdf"), "the default decides: \(harness.daemonLog.suffix(2000))")
        #expect(!FileManager.default.fileExists(atPath: harness.sandbox(Self.pdfviewer) + "/report.pdf"))

        let routed = try CtlProcess.run(["route"] + config + [harness.root + "/other.pdf"])
        #expect(routed.output.contains("→ com.example.hexviewer (the administrator's default)"), "\(routed.output)")
        #expect(routed.output.contains("com.example.hexviewer is the administrator's default for com.adobe.pdf, and it can open it: it claims public.data"),
                "\(routed.output)")
        #expect(routed.output.contains("without the default \(Self.pdfviewer) would have been chosen"), "\(routed.output)")

        let byMIME = try CtlProcess.run(["default", "set", "application/pdf", Self.pdfviewer] + config)
        #expect(byMIME.status == 0, "\(byMIME.error)")
        #expect(byMIME.output.contains("type com.adobe.pdf (from the MIME type application/pdf) → \(Self.pdfviewer)"), "\(byMIME.output)")
        let unset = try CtlProcess.run(["default", "unset", "pdf"] + config)
        #expect(unset.status == 0, "\(unset.error)")

        // A default whose handler cannot open the document (set by hand, or its manifest changed).
        try #"{"schemes":{},"types":{"com.adobe.pdf":"org.docroute.textviewer"}}"#.write(toFile: defaultsFile, atomically: true, encoding: .utf8)
        let passed = try CtlProcess.run(["route", "--json"] + config + [harness.root + "/other.pdf"])
        let object = (try? JSONSerialization.jsonObject(with: Data(passed.output.utf8))) as? [String: Any] ?? [:]
        #expect(object["bundleIdentifier"] as? String == Self.pdfviewer, "\(passed.output)")
        let decision = object["adminDefault"] as? [String: Any] ?? [:]
        #expect(decision["decided"] as? Bool == false && decision["bundleIdentifier"] as? String == Self.textviewer, "\(passed.output)")
        #expect((decision["passedOverReason"] as? String ?? "").contains("it claims neither com.adobe.pdf nor any type it conforms to"), "\(passed.output)")
        #expect((object["reason"] as? String ?? "").contains("the administrator's default for com.adobe.pdf, \(Self.textviewer), was passed over"), "\(passed.output)")
    }

    // `route` on a folder says what intake does with it: a mailbox folder whose files are routed
    // one by one (listed), or a package routed as one document; dropping it does the same.
    @Test func routeOnAFolderSaysWhatIntakeDoesWithIt() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let folder = harness.root + "/folder"
        try FileManager.default.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: true)
        try Data(Self.pdf).write(to: URL(fileURLWithPath: folder + "/a.pdf"))
        try Data("plain words\n".utf8).write(to: URL(fileURLWithPath: folder + "/b.txt"))
        try Data(DeliveryIntegrationTests.pdb).write(to: URL(fileURLWithPath: folder + "/sub/c.pdb"))
        try Data("half".utf8).write(to: URL(fileURLWithPath: folder + "/.d.pdf"))

        let routed = try CtlProcess.run(["route", "--config", harness.configPath, folder])
        #expect(routed.status == 0, "\(routed.error)")
        #expect(!routed.output.contains("no handler"), "\(routed.output)")
        #expect(routed.output.contains("→ a mailbox folder: dropped into an inbox, its files go to mailbox folder, each routed as a file"), "\(routed.output)")
        #expect(routed.output.contains("  a.pdf: com.adobe.pdf → \(Self.pdfviewer) (mailbox folder)"), "\(routed.output)")
        #expect(routed.output.contains("  b.txt: public.plain-text → \(Self.textviewer) (mailbox folder)"), "\(routed.output)")
        #expect(routed.output.contains("  sub/c.pdb: com.sunsetlakesoftware.molecules.pdb → \(Self.molecules) (mailbox folder)"), "\(routed.output)")
        #expect(!routed.output.contains(".d.pdf"), "a name still being written is not taken: \(routed.output)")

        let package = harness.root + "/Notes.rtfd"
        try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: true)
        try Data("{\\rtf1 hi}".utf8).write(to: URL(fileURLWithPath: package + "/TXT.rtf"))
        let packaged = try CtlProcess.run(["route", "--config", harness.configPath, package])
        #expect(packaged.output.contains("\(package): com.apple.rtfd"), "\(packaged.output)")
        #expect(packaged.output.contains("a package document: intake delivers the folder whole, as one document"), "\(packaged.output)")

        // What route said is what intake does.
        unlink(folder + "/.d.pdf")
        try harness.start()
        #expect(rename(folder, harness.inbox + "/folder") == 0)
        #expect(harness.waitFor(harness.sandbox(Self.pdfviewer, mailbox: "folder") + "/a.pdf"), "\(harness.daemonLog.suffix(2000))")
        #expect(harness.waitFor(harness.sandbox(Self.textviewer, mailbox: "folder") + "/b.txt"))
        #expect(harness.waitFor(harness.sandbox(Self.molecules, mailbox: "folder") + "/c.pdb"))
        let inInbox = try CtlProcess.run(["route", "--config", harness.configPath, harness.inbox + "/folder"])
        #expect(inInbox.output.contains("→ a mailbox folder of the inbox \(harness.inbox): its files go to mailbox folder"), "\(inInbox.output)")
    }
}
