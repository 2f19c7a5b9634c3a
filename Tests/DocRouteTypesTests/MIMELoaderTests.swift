import Foundation
import Testing

@testable import DocRouteTypes

@Suite("MIME database loading and XDG precedence")
struct MIMELoaderTests {
    @Test func defaultSearchOrderUsesHomeThenLocalThenUsr() {
        let loader = MIMEDatabaseLoader(environment: ["HOME": "/home/ada"])
        #expect(
            loader.searchDirectories == ["/home/ada/.local/share/mime", "/usr/local/share/mime", "/usr/share/mime"]
        )
    }

    @Test func explicitVariablesReplaceTheDefaults() {
        let loader = MIMEDatabaseLoader(environment: [
            "HOME": "/home/ada",
            "XDG_DATA_HOME": "/data/home/",
            "XDG_DATA_DIRS": "/opt/share:relative/share::/usr/share:/opt/share",
        ])
        // Relative and empty entries are ignored, trailing slashes are fine, duplicates appear once.
        #expect(loader.searchDirectories == ["/data/home/mime", "/opt/share/mime", "/usr/share/mime"])
    }

    @Test func emptyOrRelativeDataHomeFallsBackToHome() {
        #expect(
            MIMEDatabaseLoader(environment: ["HOME": "/h", "XDG_DATA_HOME": ""]).searchDirectories.first
                == "/h/.local/share/mime"
        )
        #expect(
            MIMEDatabaseLoader(environment: ["HOME": "/h", "XDG_DATA_HOME": "x"]).searchDirectories.first
                == "/h/.local/share/mime"
        )
        #expect(MIMEDatabaseLoader(environment: ["XDG_DATA_DIRS": "/a"]).searchDirectories == ["/a/mime"])
    }

    @Test func noDatabaseAnywhereGivesTheBuiltinFallback() throws {
        let fixture = try MIMEFixtureDirectory()
        let database = try MIMEDatabase.load(environment: [
            "XDG_DATA_HOME": fixture.root.appendingPathComponent("nothing").path,
            "XDG_DATA_DIRS": fixture.root.appendingPathComponent("none").path,
        ])
        #expect(database.source == "built-in fallback")
        #expect(database.directories.isEmpty)
        #expect(database.detect(filename: "a.pdf", head: []).mimeType == "application/pdf")
    }

    @Test func earlierDirectoriesTakePrecedence() throws {
        let fixture = try MIMEFixtureDirectory()
        let system = try fixture.dataDirectory(
            "system",
            files: [
                "globs2": Array(
                    """
                    50:text/x-a:*.foo
                    50:text/x-a:*.keep
                    50:text/x-sys:*.dup
                    50:text/x-other:*.other

                    """.utf8
                ),
                "magic": MagicFileFixture.encode([
                    (50, "text/x-a", [MagicRuleFixture(offset: 0, "AAAA")]),
                    (50, "text/x-sys", [MagicRuleFixture(offset: 0, "TIE!")]),
                    (50, "text/x-other", [MagicRuleFixture(offset: 0, "OTHR")]),
                ]),
                "aliases": Array("text/x-old text/x-sys\n".utf8),
                "subclasses": Array("text/x-a text/x-base-sys\n".utf8),
            ]
        )
        let local = try fixture.dataDirectory(
            "local",
            files: ["globs2": Array("50:text/x-local:*.loc\n".utf8)]
        )
        let home = try fixture.dataDirectory(
            "home",
            files: [
                "globs2": Array(
                    """
                    0:text/x-a:__NOGLOBS__
                    50:text/x-a:*.bar
                    50:text/x-home:*.dup

                    """.utf8
                ),
                "magic": MagicFileFixture.encode([
                    (
                        50, "text/x-a",
                        [MagicRuleFixture(offset: 0, "__NOMAGIC__"), MagicRuleFixture(offset: 0, "BBBB")]
                    ),
                    (50, "text/x-home", [MagicRuleFixture(offset: 0, "TIE!")]),
                ]),
                "aliases": Array("text/x-old text/x-home\n".utf8),
                "subclasses": Array("text/x-a text/x-base-home\n".utf8),
            ]
        )
        let database = try MIMEDatabase.load(environment: [
            "XDG_DATA_HOME": home,
            "XDG_DATA_DIRS": "\(local):\(system)",
        ])

        #expect(database.directories == ["\(home)/mime", "\(local)/mime", "\(system)/mime"])
        #expect(database.source == "shared-mime-info: \(home)/mime, \(local)/mime, \(system)/mime")
        // __NOGLOBS__ in home removed every system glob of text/x-a; other types are untouched.
        #expect(database.globMatches(filename: "x.foo").isEmpty)
        #expect(database.globMatches(filename: "x.keep").isEmpty)
        #expect(database.globMatches(filename: "x.bar").map(\.type) == ["text/x-a"])
        #expect(database.globMatches(filename: "x.other").map(\.type) == ["text/x-other"])
        #expect(database.globMatches(filename: "x.loc").map(\.type) == ["text/x-local"])
        // __NOMAGIC__ likewise, keeping the rules after it.
        #expect(database.magicMatch(head: Array("AAAA".utf8)) == nil)
        #expect(database.magicMatch(head: Array("BBBB".utf8))?.type == "text/x-a")
        #expect(database.magicMatch(head: Array("OTHR".utf8))?.type == "text/x-other")
        // Equal rules: the home directory's comes first.
        #expect(database.globMatches(filename: "x.dup").map(\.type) == ["text/x-home", "text/x-sys"])
        #expect(database.magicMatch(head: Array("TIE!".utf8))?.type == "text/x-home")
        // Aliases: home wins. Subclasses: merged, home's first.
        #expect(database.canonical("text/x-old") == "text/x-home")
        #expect(
            database.parents(of: "text/x-a") == [
                "text/x-base-home", "text/x-base-sys", "text/plain", "application/octet-stream",
            ]
        )
    }

    @Test func directoryWithoutCompiledFilesIsSkipped() throws {
        let fixture = try MIMEFixtureDirectory()
        let empty = try fixture.dataDirectory("empty", files: [:])
        let system = try fixture.dataDirectory("system", files: ["aliases": Array("a/b c/d\n".utf8)])
        let database = try MIMEDatabase.load(environment: ["XDG_DATA_HOME": empty, "XDG_DATA_DIRS": system])
        #expect(database.directories == ["\(system)/mime"])
        #expect(database.canonical("a/b") == "c/d")
    }

    @Test func brokenMagicFileIsReportedWithItsPath() throws {
        let fixture = try MIMEFixtureDirectory()
        let system = try fixture.dataDirectory("system", files: ["magic": Array("not magic".utf8)])
        let error = #expect(throws: MIMEDatabaseError.self) {
            _ = try MIMEDatabase.load(environment: ["XDG_DATA_HOME": "/nonexistent-docroute", "XDG_DATA_DIRS": system])
        }
        #expect(error?.code == .magicHeaderMissing)
        #expect(error?.inputFile == "\(system)/mime/magic")
        #expect(error.map { "\($0)" }?.hasPrefix("mime.magic.header-missing: ") == true)
    }

    @Test func nonUTF8GlobsFileIsAnError() throws {
        let fixture = try MIMEFixtureDirectory()
        let system = try fixture.dataDirectory("system", files: ["globs2": [0x35, 0x30, 0x3A, 0xFF, 0x0A]])
        let error = #expect(throws: MIMEDatabaseError.self) {
            _ = try MIMEDatabase.load(environment: ["XDG_DATA_HOME": "/nonexistent-docroute", "XDG_DATA_DIRS": system])
        }
        #expect(error?.code == .malformedText)
    }

    @Test func aDirectoryWhereAFileShouldBeIsAnError() throws {
        let fixture = try MIMEFixtureDirectory()
        let system = try fixture.dataDirectory("system", files: [:])
        try FileManager.default.createDirectory(atPath: "\(system)/mime/globs2", withIntermediateDirectories: true)
        let error = #expect(throws: MIMEDatabaseError.self) {
            _ = try MIMEDatabase.load(environment: ["XDG_DATA_HOME": "/nonexistent-docroute", "XDG_DATA_DIRS": system])
        }
        #expect(error?.code == .unreadableFile)
    }
}
