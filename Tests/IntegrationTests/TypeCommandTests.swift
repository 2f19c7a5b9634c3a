import DocRouteTestSupport
import Foundation
import Testing

/// `docroutectl type --json`: what a user sees for the shipped samples, a package and a folder.
@Suite struct TypeCommandTests {
    static func typed(_ paths: [String]) throws -> (status: Int32?, entries: [String: [String: Any]]) {
        let result = try CtlProcess.run(["type", "--json", "--handlers", DaemonHarness.repositoryRoot + "/config/handlers"] + paths)
        let array = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: Any]], "\(result.error)")
        var entries: [String: [String: Any]] = [:]
        for entry in array {
            if let path = entry["path"] as? String { entries[(path as NSString).lastPathComponent] = entry }
        }
        return (result.status, entries)
    }

    @Test func samplesPackagesAndFolders() throws {
        let temporary = try TemporaryFolder("type")
        defer { temporary.remove() }
        let root = temporary.string
        try FileManager.default.createDirectory(atPath: root + "/Report.rtfd", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/Holiday", withIntermediateDirectories: true)
        let samples = DaemonHarness.repositoryRoot + "/config/samples/"
        let (status, entries) = try Self.typed([samples + "1abc.pdb", samples + "1abc.pdb.gz", samples + "picture-without-extension",
                                                root + "/Report.rtfd", root + "/Holiday"])
        #expect(status == 0)

        // The seed's protein structure reaches Molecules' type; its MIME type is what detection found.
        let protein = try #require(entries["1abc.pdb"])
        #expect(protein["contentType"] as? String == "com.sunsetlakesoftware.molecules.pdb")
        #expect(protein["mimeType"] as? String == "chemical/x-pdb")
        #expect((protein["conformsTo"] as? [String])?.suffix(3) == ["public.data", "public.content", "public.item"])

        let compressed = try #require(entries["1abc.pdb.gz"])
        #expect(compressed["contentType"] as? String == "org.gnu.gnu-zip-archive")
        #expect(compressed["innerContentType"] as? String == "com.sunsetlakesoftware.molecules.pdb")
        #expect(compressed["mimeType"] as? String == "application/gzip")

        let picture = try #require(entries["picture-without-extension"])
        #expect(picture["contentType"] as? String == "public.png")
        #expect(picture["decidedBy"] as? String == "content")

        let package = try #require(entries["Report.rtfd"])
        #expect(package["contentType"] as? String == "com.apple.rtfd")
        #expect((package["conformsTo"] as? [String])?.contains("public.directory") == true)
        #expect((package["conformsTo"] as? [String])?.contains("public.data") == false)

        let folder = try #require(entries["Holiday"])
        #expect(folder["contentType"] as? String == "public.folder")
        #expect(folder["conformsTo"] as? [String] == ["public.directory", "public.item"])
    }

    @Test func aMissingPathIsAnErrorAndTheOthersAreStillTyped() throws {
        let temporary = try TemporaryFolder("type")
        defer { temporary.remove() }
        let missing = temporary.string("missing.pdf")
        let (status, entries) = try Self.typed([missing, DaemonHarness.repositoryRoot + "/config/samples/readme.txt"])
        #expect(status == 1)
        #expect(entries[(missing as NSString).lastPathComponent]?["error"] as? String == "no such file")
        #expect(entries["readme.txt"]?["mimeType"] as? String == "text/plain")
    }
}
