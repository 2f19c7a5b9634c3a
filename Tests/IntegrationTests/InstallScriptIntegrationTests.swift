import DocRouteTestSupport
import Foundation
import Testing

/// `scripts/install.sh` with a prefix other than /usr, run on the debug binaries
/// into a staging root: the units run and point into that prefix, and the man pages are there with
/// their hand-written sections.
@Suite(.serialized) struct InstallScriptIntegrationTests {
    static var generateManualBuilt: Bool {
        FileManager.default.isExecutableFile(atPath: DaemonHarness.binDirectory + "/generate-manual")
    }

    /// Runs install.sh PREFIX DESTDIR BINDIR; returns the staging root and its output.
    func install(prefix: String) throws -> (root: String, output: String, status: Int32) {
        let root = try TemporaryFolder("install").string
        let (status, output) = try DaemonHarness.run(DaemonHarness.repositoryRoot + "/scripts/install.sh", [prefix, root, DaemonHarness.binDirectory])
        return (root, output, status)
    }

    @Test func aNonUsrPrefixIsWhatTheUnitsRunAndPointTo() throws {
        let (root, output, status) = try install(prefix: "/opt/docroute")
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(status == 0, "\(output)")
        let units = root + "/opt/docroute/lib/systemd/system"
        let service = try String(contentsOfFile: units + "/docroute.service", encoding: .utf8)
        #expect(service.contains("ExecStart=/opt/docroute/bin/docrouted --config /etc/docroute/docroute.toml"), "\(service)")
        #expect(service.contains("Documentation=file:///opt/docroute/share/doc/docroute/README.md"), "\(service)")
        let socket = try String(contentsOfFile: units + "/docroute.socket", encoding: .utf8)
        #expect(socket.contains("Documentation=file:///opt/docroute/share/doc/docroute/PROTOCOL.md"), "\(socket)")
        let handler = try String(contentsOfFile: units + "/docroute-handler@.service", encoding: .utf8)
        #expect(handler.contains("ExecStart=/opt/docroute/bin/docroutectl "), "\(handler)")
        for text in [service, socket, handler] {
            let lines = text.split(separator: "\n").filter { !$0.hasPrefix("#") && $0.contains("/usr/") }
            #expect(lines.isEmpty, "\(lines)")
        }
        #expect(FileManager.default.fileExists(atPath: root + "/opt/docroute/share/doc/docroute/README.md"))

        // docroute.toml(5): every key of the shipped configuration, with its default, and an example.
        let page = try String(contentsOfFile: root + "/opt/docroute/share/man/man5/docroute.toml.5", encoding: .utf8)
        let shipped = try String(contentsOfFile: DaemonHarness.repositoryRoot + "/config/docroute.toml", encoding: .utf8)
        let keys = Set(shipped.split(separator: "\n").compactMap { line -> String? in
            let text = line.hasPrefix("# ") ? line.dropFirst(2) : line[...]
            guard let equals = text.firstIndex(of: "="), !text.hasPrefix("#") else { return nil }
            let key = text[..<equals].trimmingCharacters(in: .whitespaces)
            return key.allSatisfy { $0.isLowercase || $0 == "_" } && !key.isEmpty ? key : nil
        })
        #expect(keys.count >= 14, "\(keys)")
        for key in keys { #expect(page.contains(".It Cm \(key) "), "docroute.toml(5) lacks \(key)") }
        #expect(page.contains(".Sh EXAMPLES") && page.contains("Default"))
    }

    @Test(.enabled(if: generateManualBuilt, "needs generate-manual beside the binaries (swift build --product generate-manual)"))
    func theCommandPagesHaveTheirHandWrittenSections() throws {
        let (root, output, status) = try install(prefix: "/usr/local")
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(status == 0, "\(output)")
        for page in ["man8/docrouted.8", "man1/docroutectl.1"] {
            let text = try String(contentsOfFile: root + "/usr/local/share/man/" + page, encoding: .utf8)
            for section in ["ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES", "SEE ALSO"] {
                #expect(text.components(separatedBy: ".Sh \(section)").count == 2, "\(page): \(section) once")
            }
            #expect(text.contains(".Sh SYNOPSIS") && text.contains("Fl -config"), "\(page): the generated options stay\n\(text.prefix(1500))")
            #expect(!text.contains(".Ex -std") && !text.contains(".Sh \"EXIT STATUS\""), "\(page): the generated EXIT STATUS is replaced")
        }
    }
}
