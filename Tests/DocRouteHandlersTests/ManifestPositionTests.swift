import DocRouteTestSupport
import DocRouteTypes
import Foundation
import Testing
@testable import DocRouteHandlers

/// A manifest that is not a property list is reported with where it stops being one.
@Suite struct ManifestPositionTests {
    static let sample = Fixtures.sampleHandlersFolder + "/molecules.plist"

    func read(_ data: Data) -> Result<HandlerManifest, ManifestError> {
        var issues: [TypeCatalogIssue] = []
        return ManifestReader.read(data: data, file: "m.plist", typeIssues: &issues)
    }

    func failure(_ data: Data) throws -> ManifestError {
        guard case .failure(let error) = read(data) else {
            Issue.record("read as a manifest")
            throw TestSupportError("read as a manifest")
        }
        return error
    }

    /// The sample cut inside the string of line 14: the error names the line where the file ends
    /// and the last element that was complete, instead of Foundation's "not in the correct format".
    @Test func aTruncatedXMLManifestNamesTheLineWhereItEnds() throws {
        let whole = try Data(contentsOf: URL(fileURLWithPath: Self.sample))
        let cut = whole.prefix(400)
        #expect(String(decoding: cut, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).count == 14)
        let error = try failure(cut)
        #expect(error.code == .notPropertyList)
        #expect(error.inputLine == 14, "\(error)")
        #expect(error.message.contains("the file ends on line 14") && error.message.contains("truncated")
                && error.message.contains("<string> (opened on line 14) not closed")
                && error.message.contains("the last complete element, <key>, ends on line 12"), "\(error.message)")
        #expect(!error.message.contains("correct format"), "\(error.message)")
        #expect(error.description.hasPrefix("m.plist:14: not a property list"), "\(error.description)")
    }

    @Test func aClosingTagOfTheWrongElementNamesBothLines() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            <!-- a comment with <tags> in it -->
            <key>CFBundleIdentifier</key>
            <string>com.example.x</key>
            </dict>
            </plist>
            """
        let error = try failure(Data(text.utf8))
        #expect(error.inputLine == 7, "\(error)")
        #expect(error.message.contains("</key> on line 7 closes <string>, opened on line 7"), "\(error.message)")
    }

    @Test func aTruncatedBinaryManifestSaysItsTrailerPointsOutside() throws {
        let plist = try PropertyListSerialization.propertyList(from: try Data(contentsOf: URL(fileURLWithPath: Self.sample)), options: [], format: nil)
        let binary = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        let error = try failure(binary.prefix(binary.count / 2))
        #expect(error.code == .notPropertyList)
        #expect(error.message.contains("binary property list of \(binary.count / 2) bytes") && error.message.contains("truncated"), "\(error.message)")
    }

    /// A file that nests well but is still no property list keeps Foundation's own words.
    @Test func anythingElseKeepsFoundationsMessage() throws {
        let error = try failure(Data("not a plist at all".utf8))
        #expect(error.code == .notPropertyList && error.inputLine == nil, "\(error)")
    }
}
