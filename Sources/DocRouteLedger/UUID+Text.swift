import DocRouteProtocol
import Foundation

/// A delivery id's text, written and read without C's formatted printing and scanning
/// (`uuidString` goes through `sprintf`, `UUID(uuidString:)` through `sscanf`): in a burst of small
/// files every row is written and looked up by its id several times, and those two calls were
/// 2.6% of the committing thread's time.
extension UUID {
    /// The canonical text in capitals, exactly as `uuidString` gives it: the ledger's form.
    package var ledgerText: String { text(digits: Self.upperDigits) }

    /// The canonical text in small letters: the protocol's form (`uuidString.lowercased()`).
    package var protocolText: String { text(digits: Self.lowerDigits) }

    /// Reads the canonical text (8-4-4-4-12 hexadecimal digits, either case), as
    /// `UUID(uuidString:)` does; nil for anything else.
    package init?(canonicalText text: some StringProtocol) {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed: Bool? = text.utf8.withContiguousStorageIfAvailable { utf8 in
            Self.parse(utf8, into: &bytes)
        }
        let ok = parsed ?? Self.parse(Array(text.utf8), into: &bytes)
        guard ok else { return nil }
        self.init(uuid: bytes)
    }

    private static let upperDigits: StaticString = "0123456789ABCDEF"
    private static let lowerDigits: StaticString = "0123456789abcdef"

    private func text(digits: StaticString) -> String {
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { out in
                let hex = digits.utf8Start
                var position = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    out[position] = hex[Int(bytes[index] >> 4)]
                    out[position + 1] = hex[Int(bytes[index] & 0x0F)]
                    position += 2
                }
                return position
            }
        }
    }

    private static func parse(_ utf8: some Collection<UInt8>, into uuid: inout uuid_t) -> Bool {
        guard utf8.count == 36 else { return false }
        return withUnsafeMutableBytes(of: &uuid) { bytes in
            var high: UInt8? = nil
            var index = 0
            for (position, character) in utf8.enumerated() {
                if position == 8 || position == 13 || position == 18 || position == 23 {
                    guard character == UInt8(ascii: "-") else { return false }
                    continue
                }
                guard let value = ASCIIHex.value(character) else { return false }
                if let first = high {
                    bytes[index] = first << 4 | value
                    index += 1
                    high = nil
                } else {
                    high = value
                }
            }
            return index == 16
        }
    }
}
