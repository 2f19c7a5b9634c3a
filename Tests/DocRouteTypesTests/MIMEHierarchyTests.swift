import Testing

@testable import DocRouteTypes

@Suite("MIME aliases and subclasses")
struct MIMEHierarchyTests {
    let database: MIMEDatabase

    init() throws {
        database = try .fixture(
            globs2: "50:application/xml:*.xml\n50:application/vnd.ms-excel.sheet.macroEnabled.12:*.xlsm\n",
            magic: MagicFileFixture.encode([(40, "text/xml", [MagicRuleFixture(offset: 0, "<?xml")])]),
            subclasses: """
                image/svg+xml application/xml
                application/xml text/plain
                application/x-vendor-thing text/xml
                inode/mount-point inode/directory
                text/x-cycle-a text/x-cycle-b
                text/x-cycle-b text/x-cycle-a
                """,
            aliases: """
                text/xml application/xml
                application/x-gzip application/gzip
                """
        )
    }

    @Test func canonicalStripsParametersLowercasesAndResolvesAliases() {
        #expect(database.canonical("Text/XML; charset=utf-8") == "application/xml")
        #expect(database.canonical("  application/X-GZIP ") == "application/gzip")
        #expect(database.canonical("image/png") == "image/png")
        #expect(database.canonical("text/plain;format=flowed") == "text/plain")
    }

    @Test func databaseTypesComeOutCanonical() {
        // Magic written against an alias, globs with capitals: both come back canonical.
        #expect(database.magicMatch(head: Array("<?xml version='1.0'?>".utf8))?.type == "application/xml")
        #expect(
            database.globMatches(filename: "book.xlsm").first?.type == "application/vnd.ms-excel.sheet.macroenabled.12"
        )
    }

    @Test func parentsIncludeExplicitThenImplicitOnes() {
        #expect(database.parents(of: "image/svg+xml") == ["application/xml", "application/octet-stream"])
        #expect(database.parents(of: "application/xml") == ["text/plain", "application/octet-stream"])
        #expect(database.parents(of: "text/html") == ["text/plain", "application/octet-stream"])
        #expect(database.parents(of: "text/plain") == ["application/octet-stream"])
        #expect(database.parents(of: "application/octet-stream").isEmpty)
        #expect(database.parents(of: "inode/directory").isEmpty)
        #expect(database.parents(of: "inode/mount-point") == ["inode/directory"])
        // A parent written as an alias is resolved.
        #expect(database.parents(of: "application/x-vendor-thing") == ["application/xml", "application/octet-stream"])
    }

    @Test func ancestorsAreBreadthFirstWithOctetStreamLast() {
        #expect(
            database.ancestors(of: "image/svg+xml") == ["application/xml", "text/plain", "application/octet-stream"]
        )
        #expect(
            database.ancestors(of: "text/x-cycle-a") == ["text/x-cycle-b", "text/plain", "application/octet-stream"]
        )
    }

    @Test func isSubclassFollowsChainsAliasesAndImplicitRules() {
        #expect(database.isSubclass("image/svg+xml", of: "text/plain"))
        #expect(database.isSubclass("image/svg+xml", of: "text/xml"))
        #expect(database.isSubclass("IMAGE/SVG+XML", of: "application/xml; charset=utf-8"))
        #expect(database.isSubclass("text/x-anything", of: "text/plain"))
        #expect(database.isSubclass("image/png", of: "application/octet-stream"))
        #expect(database.isSubclass("image/png", of: "image/*"))
        #expect(database.isSubclass("image/png", of: "image/png"))
        #expect(!database.isSubclass("image/png", of: "text/plain"))
        #expect(!database.isSubclass("application/xml", of: "image/svg+xml"))
        #expect(!database.isSubclass("inode/directory", of: "application/octet-stream"))
        #expect(database.isSubclass("inode/mount-point", of: "inode/directory"))
        #expect(!database.isSubclass("text/x-cycle-a", of: "image/png"))
    }
}
