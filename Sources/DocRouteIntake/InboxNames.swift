/// Which names in an inbox are documents still being written, and so left alone until renamed.
package enum InboxNames {
    /// Names starting with `.`, or ending in `.part`, `.tmp`, `.crdownload` or `~`.
    package static func isInProgress(_ name: [UInt8]) -> Bool {
        guard let first = name.first else { return true }
        if first == UInt8(ascii: ".") || name.last == UInt8(ascii: "~") { return true }
        for suffix in [".part", ".tmp", ".crdownload"] where name.count >= suffix.utf8.count {
            if name.suffix(suffix.utf8.count).elementsEqual(suffix.utf8, by: { lowercase($0) == $1 }) { return true }
        }
        return false
    }

    static func lowercase(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
    }

    /// A name as text for logs and typing; bytes that are not UTF-8 become U+FFFD.
    package static func display(_ name: [UInt8]) -> String {
        String(decoding: name, as: UTF8.self)
    }
}
