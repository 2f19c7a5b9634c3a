/// A file name from a mail turned into one safe name that can never act as a path.
///
/// Whoever sent the mail chose the name, so: `/` and `\` become `_`; NUL, C0 and C1 control
/// characters, DEL and bidirectional formatting characters are removed; runs of dots become one dot
/// (no `..` anywhere); leading dots and surrounding spaces are dropped (no hidden files, no `.`);
/// the result is at most 255 UTF-8 bytes, cut in the stem so a short extension survives; an empty
/// result is `attachment`.
package enum AttachmentFileName {
    /// The name used when a part has none, or nothing of its name survives.
    package static let fallback = "attachment"
    /// The longest name, in UTF-8 bytes (Linux file systems' limit).
    package static let maximumBytes = 255

    /// The name of an attached message, always ending in `.eml` (so it is typed as one, as mail
    /// clients save it): the part's own name (`.eml` added when it has another ending), else the
    /// message's subject, else `message.eml`.
    package static func forMessage(name: String?, subject: String?) -> String {
        for candidate in [name, subject] {
            // A name or subject of which nothing survives (`...`, control characters) gives way.
            guard let candidate, let safe = sanitized(candidate) else { continue }
            if safe.lowercased().hasSuffix(".eml") { return safe }
            // Sanitising again keeps `.eml` whole: the cut for length spares a short extension.
            return sanitized(safe + ".eml") ?? "message.eml"
        }
        return "message.eml"
    }

    /// The safe name for `original`.
    package static func sanitize(_ original: String) -> String {
        sanitized(original) ?? fallback
    }

    /// The safe name for `original`, or nil when nothing of it survives.
    static func sanitized(_ original: String) -> String? {
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(original.unicodeScalars.count)
        for scalar in original.unicodeScalars {
            switch scalar.value {
            case 0x2F, 0x5C:
                scalars.append("_")
            case 0x00...0x1F, 0x7F...0x9F:
                continue
            case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x061C, 0xFEFF:
                continue
            case 0x2E:
                if scalars.last != "." { scalars.append(scalar) }
            default:
                scalars.append(scalar)
            }
        }
        var start = 0
        var end = scalars.count
        while start < end, scalars[start] == "." || isSpace(scalars[start]) { start += 1 }
        while end > start, isSpace(scalars[end - 1]) { end -= 1 }
        var name = String(String.UnicodeScalarView(scalars[start..<end]))
        if name.utf8.count > maximumBytes { name = shortened(name) }
        return name.isEmpty ? nil : name
    }

    static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\u{A0}" || scalar == "\u{3000}" || (0x2000...0x200B).contains(scalar.value)
    }

    /// `name` cut to ``maximumBytes`` at a character boundary, keeping an extension of up to 16 bytes.
    static func shortened(_ name: String) -> String {
        var stem = Substring(name)
        var suffix = ""
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            let candidate = name[dot...]
            if candidate.utf8.count <= 16 {
                suffix = String(candidate)
                stem = name[..<dot]
            }
        }
        let budget = maximumBytes - suffix.utf8.count
        var kept = ""
        var used = 0
        for character in stem {
            let size = character.utf8.count
            if used + size > budget { break }
            kept.append(character)
            used += size
        }
        return kept + suffix
    }
}
