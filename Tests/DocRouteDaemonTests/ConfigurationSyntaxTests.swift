import Foundation
import Testing
@testable import DocRouteConfiguration

/// A string left without its closing quote in docroute.toml is reported as that, on its line,
/// instead of in toml++'s words for the character it met instead.
@Suite struct ConfigurationSyntaxTests {
    func parseError(_ text: String) -> ConfigurationError? {
        do {
            _ = try DaemonConfiguration.parse(text, file: "docroute.toml")
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        // The line ends before the quote; a literal string the same.
        ("max_file_size = 10\nsocket = \"/run/x.sock\nmax_connections = 5\n", 2, "\""),
        ("socket = '/run/x.sock\n", 1, "'"),
        ("[[inbox]]\npath = \"/srv/drop\r\nkind = \"directory\"\r\n", 2, "\""),
    ])
    func aLineThatEndsInsideAString(text: String, line: Int, quote: String) throws {
        let error = try #require(parseError(text))
        #expect(error.code == .syntax)
        #expect(error.inputLine == line)
        #expect(error.message.hasPrefix("unterminated string: the line ends before the closing quote (\(quote))"), "\(error.message)")
        #expect(!error.message.contains("control characters"), "\(error.message)")
        #expect(error.description.hasPrefix("docroute.toml:\(line): unterminated string"), "\(error.description)")
    }

    @Test(arguments: [
        ("socket = \"/run/x.sock", 1),
        ("socket = \"/run/x.sock\"\nstate_directory = \"\"\"/var/lib/x\nmax_connections = 5\n", 2),
    ])
    func aFileThatEndsInsideAString(text: String, line: Int) throws {
        let error = try #require(parseError(text))
        #expect(error.inputLine == line, "\(error)")
        #expect(error.message.contains("unterminated string: the file ends before the closing quote") && error.message.contains("starts on line \(line)"),
                "\(error.message)")
    }

    /// Other syntax errors keep toml++'s words and line.
    @Test func otherSyntaxErrorsKeepTheirWords() throws {
        let error = try #require(parseError("socket = \"/run/x.sock\"\nmax_connections = = 5\n"))
        #expect(error.inputLine == 2 && error.message.hasPrefix("TOML syntax: "), "\(error)")
    }

    /// No inbox: `--check` warns that only `open` requests will be delivered.
    @Test func noInboxIsAWarningOfTheCheck() throws {
        let configuration = try DaemonConfiguration.parse("socket = \"/tmp/none.sock\"\n", file: "docroute.toml")
        #expect(configuration.inboxes.isEmpty)
        let findings = ConfigurationCheck(configuration: configuration).run(mime: MIMEDatabaseChoice(environment: [:]))
        let inbox = findings.filter { $0.subject == "inbox" }
        #expect(inbox.count == 1 && inbox.first?.severity == .warning, "\(findings)")
        #expect(inbox.first?.message.hasPrefix("no inboxes configured: nothing will be delivered except `open` requests") == true, "\(inbox)")
    }
}
