import Foundation

extension DeliveryBatch {
    /// The annotation of a delivered file: the caller's extra entries, then `mailbox`,
    /// `originalFilename` and `size` (which win over extra entries of the same key, except an
    /// `originalFilename` the caller gives: a mail part's name as the mail spelled it, before it
    /// was made safe).
    static func annotation(mailbox: String, originalFilename: String, size: Int64, extra: String?) -> String {
        guard let extra, !extra.isEmpty,
              let object = try? JSONSerialization.jsonObject(with: Data(extra.utf8)) as? [String: Any],
              !object.isEmpty
        else {
            // The common case, written by hand: no JSON encoder per file.
            return "{\"mailbox\":\(jsonString(mailbox)),\"originalFilename\":\(jsonString(originalFilename)),\"size\":\(size)}"
        }
        var merged = object
        merged["mailbox"] = mailbox
        if !(merged["originalFilename"] is String) { merged["originalFilename"] = originalFilename }
        merged["size"] = size
        guard let data = try? JSONSerialization.data(withJSONObject: merged, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return annotation(mailbox: mailbox, originalFilename: originalFilename, size: size, extra: nil)
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// A JSON string literal (RFC 8259): quotes, backslashes and control characters escaped.
    static func jsonString(_ text: String) -> String {
        var result = "\""
        result.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
