import DocRouteTestSupport
import Foundation

/// Writes real Info.plist files (XML and binary) into a temporary handlers directory.
struct ManifestFixtures {
    let folder: TemporaryFolder
    let directory: String

    init() throws {
        folder = try TemporaryFolder("handlers")
        directory = folder.string
    }

    /// Writes `plist` as `name` in XML or binary form, through Foundation's own writer.
    @discardableResult
    func write(_ name: String, _ plist: [String: Any], binary: Bool = false) throws -> String {
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: binary ? .binary : .xml, options: 0)
        let path = directory + "/" + name
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    func writeRaw(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/" + name))
    }

    func copySamples() throws {
        try Fixtures.copySampleHandlers(to: directory)
    }

    /// The real-app-shaped manifests of `Fixtures/`, as written (XML) or converted to a binary
    /// property list through Foundation, as `plutil -convert binary1` would.
    func copyFixtures(_ names: [String], binary: Bool) throws {
        for name in names {
            let xml = try Fixtures.manifest(name)
            var data = xml
            if binary {
                let plist = try PropertyListSerialization.propertyList(from: xml, options: [], format: nil)
                data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
                guard data.starts(with: Data("bplist00".utf8)) else { throw TestSupportError("\(name) did not convert to a binary plist") }
            }
            try data.write(to: URL(fileURLWithPath: directory + "/" + name + ".plist"))
        }
    }


    func remove() {
        folder.remove()
    }

    static func handler(_ id: String, types: [[String: Any]] = [], schemes: [String] = [], extra: [String: Any] = [:]) -> [String: Any] {
        var plist: [String: Any] = ["CFBundleIdentifier": id, "CFBundleDocumentTypes": types]
        if !schemes.isEmpty { plist["CFBundleURLTypes"] = [["CFBundleURLName": id, "CFBundleURLSchemes": schemes]] }
        for (key, value) in extra { plist[key] = value }
        return plist
    }

    static func claim(_ types: [String], rank: String? = nil, role: String? = "Viewer") -> [String: Any] {
        var entry: [String: Any] = ["LSItemContentTypes": types, "CFBundleTypeName": "docs"]
        if let rank { entry["LSHandlerRank"] = rank }
        if let role { entry["CFBundleTypeRole"] = role }
        return entry
    }
}
