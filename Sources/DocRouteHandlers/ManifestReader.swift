import DocRouteTypes
import Foundation

/// Reads a handler's Info.plist (XML or binary, as Apple writes them) into a ``HandlerManifest``.
///
/// Pure: it takes the file's bytes and name. Type declarations with problems are reported through
/// `typeIssues` and left out; any other problem fails the whole manifest with one ``ManifestError``.
public enum ManifestReader {
    /// Parses one manifest.
    public static func read(
        data: Data, file: String, typeIssues: inout [TypeCatalogIssue]
    ) -> Result<HandlerManifest, ManifestError> {
        let root: Any
        // Checked before Foundation sees the bytes: it crashes on a set (fuzzing, Swift 6.3).
        if holdsBinarySet(data) {
            return .failure(ManifestError(
                code: .notPropertyList, file: file,
                message: "binary property list holds a set, which an Info.plist never has; write it again with plutil or Xcode"))
        }
        do {
            root = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            return .failure(ManifestError(
                code: .notPropertyList, file: file,
                message: "not a property list (XML or binary): \(error.localizedDescription)"))
        }
        do {
            var reader = Reader(file: file)
            let manifest = try reader.manifest(from: root)
            typeIssues += reader.typeIssues
            return .success(manifest)
        } catch let error as ManifestError {
            return .failure(error)
        } catch {
            return .failure(ManifestError(code: .invalidValue, file: file, message: "\(error)"))
        }
    }

    /// Whether `data` is a binary property list with a set object (marker `0xCn`) in its object table.
    ///
    /// swift-corelibs-foundation's `PropertyListSerialization` dereferences null bridging a set to
    /// Swift, so a set must never reach it: a bad manifest would take the daemon down on reload. A
    /// malformed trailer is left to Foundation, which refuses it with an error.
    static func holdsBinarySet(_ data: Data) -> Bool {
        let bytes = [UInt8](data)
        let trailer = bytes.count - 32
        guard trailer >= 8, bytes.starts(with: "bplist".utf8) else { return false }
        func integer(at start: Int, size: Int) -> Int? {
            var value: UInt64 = 0
            for byte in bytes[start..<start + size] {
                guard value >> 56 == 0 else { return nil }
                value = value << 8 | UInt64(byte)
            }
            return Int(exactly: value)
        }
        let offsetSize = Int(bytes[trailer + 6])
        guard (1...8).contains(offsetSize),
              let objectCount = integer(at: trailer + 8, size: 8),
              let tableStart = integer(at: trailer + 24, size: 8),
              tableStart >= 8, tableStart <= trailer, objectCount <= (trailer - tableStart) / offsetSize
        else { return false }
        for index in 0..<objectCount {
            if let offset = integer(at: tableStart + index * offsetSize, size: offsetSize),
               offset >= 8, offset < trailer, bytes[offset] & 0xF0 == 0xC0 {
                return true
            }
        }
        return false
    }

    struct Reader {
        let file: String
        var typeIssues: [TypeCatalogIssue] = []

        init(file: String) { self.file = file }

        func fail(_ code: ManifestError.Code, _ keyPath: String, _ message: String) -> ManifestError {
            ManifestError(code: code, file: file, keyPath: keyPath, message: message)
        }

        func wrongType(_ keyPath: String, expected: String, found: Any) -> ManifestError {
            fail(.wrongType, keyPath, "expected \(expected), found \(PropertyListTypeName.of(found))")
        }

        func string(_ dictionary: [String: Any], _ key: String, at path: String) throws -> String? {
            guard let value = dictionary[key] else { return nil }
            guard let string = value as? String else { throw wrongType(path + key, expected: "a string", found: value) }
            return string
        }

        func strings(_ dictionary: [String: Any], _ key: String, at path: String) throws -> [String]? {
            guard let value = dictionary[key] else { return nil }
            guard let array = value as? [Any] else { throw wrongType(path + key, expected: "an array of strings", found: value) }
            return try array.enumerated().map { index, element in
                guard let string = element as? String else {
                    throw wrongType("\(path)\(key)[\(index)]", expected: "a string", found: element)
                }
                return string
            }
        }

        func dictionaries(_ dictionary: [String: Any], _ key: String) throws -> [[String: Any]] {
            guard let value = dictionary[key] else { return [] }
            guard let array = value as? [Any] else { throw wrongType(key, expected: "an array of dictionaries", found: value) }
            return try array.enumerated().map { index, element in
                guard let entry = element as? [String: Any] else {
                    throw wrongType("\(key)[\(index)]", expected: "a dictionary", found: element)
                }
                return entry
            }
        }

        mutating func manifest(from root: Any) throws -> HandlerManifest {
            guard let plist = root as? [String: Any] else {
                throw fail(.wrongType, "", "the top level must be a dictionary, found \(PropertyListTypeName.of(root))")
            }
            guard let bundleIdentifier = try string(plist, "CFBundleIdentifier", at: ""), !bundleIdentifier.isEmpty else {
                throw fail(.missingKey, "CFBundleIdentifier", "no CFBundleIdentifier; every handler needs one (reverse-DNS, e.g. com.example.viewer)")
            }
            guard Self.isValidBundleIdentifier(bundleIdentifier) else {
                throw fail(.invalidValue, "CFBundleIdentifier", "'\(bundleIdentifier)' is not a bundle identifier (letters, digits, '-' and '.', as Apple allows)")
            }
            var manifest = HandlerManifest(bundleIdentifier: bundleIdentifier, file: file)
            manifest.name = try string(plist, "CFBundleName", at: "")

            for (index, entry) in try dictionaries(plist, "CFBundleDocumentTypes").enumerated() {
                manifest.documentTypes.append(try documentType(entry, at: "CFBundleDocumentTypes[\(index)]."))
            }
            for (index, entry) in try dictionaries(plist, "CFBundleURLTypes").enumerated() {
                let path = "CFBundleURLTypes[\(index)]."
                let schemes = try strings(entry, "CFBundleURLSchemes", at: path) ?? []
                for (schemeIndex, scheme) in schemes.enumerated() where !URLSchemeClaim.isValidScheme(scheme) {
                    throw fail(.invalidValue, "\(path)CFBundleURLSchemes[\(schemeIndex)]",
                               "'\(scheme)' is not a URL scheme: RFC 3986 allows a letter, then letters, digits, '+', '-' and '.'")
                }
                manifest.urlTypes.append(URLSchemeClaim(
                    name: try string(entry, "CFBundleURLName", at: path), schemes: schemes.map { $0.lowercased() }))
            }
            for (key, origin) in [("UTExportedTypeDeclarations", DeclarationOrigin.exported(bundleIdentifier: bundleIdentifier)),
                                  ("UTImportedTypeDeclarations", DeclarationOrigin.imported(bundleIdentifier: bundleIdentifier))] {
                guard let value = plist[key] else { continue }
                guard let array = value as? [Any] else { throw wrongType(key, expected: "an array of dictionaries", found: value) }
                for (index, element) in array.enumerated() {
                    if let declaration = TypeDeclaration.fromPropertyList(
                        element, origin: origin, file: file, keyPath: "\(key)[\(index)]", issues: &typeIssues) {
                        if case .exported = origin { manifest.exportedTypes.append(declaration) } else { manifest.importedTypes.append(declaration) }
                        manifest.declarationKeyPaths.append("\(key)[\(index)]")
                    }
                }
            }

            if let user = plist["DocRouteUser"] {
                if let name = user as? String, !name.isEmpty {
                    manifest.user = UInt32(name).map(HandlerUser.uid) ?? .name(name)
                } else if let number = user as? Int, number >= 0, number <= Int(UInt32.max) {
                    manifest.user = .uid(UInt32(number))
                } else {
                    throw fail(.wrongType, "DocRouteUser", "expected a user name or a numeric uid, found \(PropertyListTypeName.of(user))")
                }
            }
            if let command = try strings(plist, "DocRouteLaunchCommand", at: "") {
                guard let program = command.first, !program.isEmpty else {
                    throw fail(.invalidValue, "DocRouteLaunchCommand", "the command is empty; give the program and its arguments, e.g. [\"/usr/bin/viewer\", \"--socket\"]")
                }
                manifest.launchCommand = command
            }
            if let container = try string(plist, "DocRouteContainer", at: "") {
                guard container.hasPrefix("/") else {
                    throw fail(.invalidValue, "DocRouteContainer", "'\(container)' must be an absolute path")
                }
                manifest.container = container
            }
            return manifest
        }

        func documentType(_ entry: [String: Any], at path: String) throws -> DocumentTypeClaim {
            var claim = DocumentTypeClaim()
            claim.name = try string(entry, "CFBundleTypeName", at: path)
            if let role = try string(entry, "CFBundleTypeRole", at: path) {
                guard let value = HandlerRole.allCases.first(where: { $0.rawValue.lowercased() == role.lowercased() }) else {
                    throw fail(.invalidValue, path + "CFBundleTypeRole", "unknown role '\(role)'; use Editor, Viewer, Shell or None")
                }
                claim.role = value
            }
            if let rank = try string(entry, "LSHandlerRank", at: path) {
                guard let value = HandlerRank.allCases.first(where: { $0.rawValue.lowercased() == rank.lowercased() }) else {
                    throw fail(.invalidValue, path + "LSHandlerRank", "unknown rank '\(rank)'; use Owner, Default, Alternate or None")
                }
                claim.rank = value
            }
            claim.contentTypes = try strings(entry, "LSItemContentTypes", at: path) ?? []
            claim.iconFiles = try strings(entry, "CFBundleTypeIconFiles", at: path) ?? []
            if let package = entry["LSTypeIsPackage"] {
                guard let flag = package as? Bool else { throw wrongType(path + "LSTypeIsPackage", expected: "a boolean", found: package) }
                claim.isPackage = flag
            }
            if entry["LSItemContentTypes"] == nil {
                // Apple reads the legacy keys only when LSItemContentTypes is absent.
                claim.legacyExtensions = (try strings(entry, "CFBundleTypeExtensions", at: path) ?? [])
                    .map { $0.hasPrefix(".") ? String($0.dropFirst()) : $0 }
                claim.legacyMIMETypes = try strings(entry, "CFBundleTypeMIMETypes", at: path) ?? []
            }
            return claim
        }

        static func isValidBundleIdentifier(_ identifier: String) -> Bool {
            identifier.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x2E || byte == 0x5F
            } && !identifier.hasPrefix(".") && !identifier.hasSuffix(".") && !identifier.contains("..")
        }
    }
}
