import DocRouteTypes
import Foundation

/// Reads a handler's Info.plist (XML or binary, as Apple writes them) into a ``HandlerManifest``.
///
/// Pure: it takes the file's bytes and name. It reads as Launch Services does: what can be used is
/// used, and everything read otherwise than written is a ``ManifestWarning`` on the manifest (an
/// unknown role or rank skips that document type; a string stands for a one-element array; white
/// space is trimmed). Only a manifest with nothing usable fails, with one ``ManifestError``.
/// Problems inside type declarations the catalog finds are reported through `typeIssues`.
public enum ManifestReader {
    /// Parses one manifest.
    public static func read(
        data: Data, file: String, typeIssues: inout [TypeCatalogIssue]
    ) -> Result<HandlerManifest, ManifestError> {
        let root: Any
        // Checked before Foundation sees the bytes: it crashes on a set (fuzzing, Swift 6.3).
        if holdsBinarySet(data) {
            return .failure(ManifestError(
                code: .notPropertyList, inputFile: file,
                message: "binary property list holds a set, which an Info.plist never has; write it again with plutil or Xcode"))
        }
        do {
            root = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            // Foundation names no position: the bytes are looked at again for one.
            let found = unreadable(data)
            return .failure(ManifestError(
                code: .notPropertyList, inputFile: file, inputLine: found?.line,
                message: "not a property list (XML or binary): \(found.map { $0.detail + "; complete or replace the file" } ?? error.localizedDescription)"))
        }
        do {
            var reader = Reader(file: file)
            var manifest = try reader.manifest(from: root)
            manifest.warnings = reader.warnings
            typeIssues += reader.typeIssues
            return .success(manifest)
        } catch let error as ManifestError {
            return .failure(error)
        } catch {
            return .failure(ManifestError(code: .invalidValue, inputFile: file, message: "\(error)"))
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
}
