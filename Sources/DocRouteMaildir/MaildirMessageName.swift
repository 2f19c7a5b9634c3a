/// The names of Maildir messages: which entries of `new/` are messages, the unique part that
/// identifies a message for its whole life, and the name it takes in `cur/` once read.
///
/// A message is `<unique>` in `new/`; a reader moves it to `cur/<unique>:2,<flags>`, the flags
/// being ASCII letters in ASCII order (`S` seen, `R` replied, `F` flagged, `T` trashed, `D` draft,
/// Dovecot keywords as lowercase letters). File systems that forbid `:` use another separator
/// (`!` or `;`, as mbsync and some Windows mounts do); pass it as `separator`.
package enum MaildirMessageName {
    /// The separator between the unique part and the info: `:`.
    package static let standardSeparator = UInt8(ascii: ":")

    /// Whether an entry of `new/` is a message: not empty and not hidden (`.` names are left to
    /// whoever made them, as Dovecot does).
    package static func isMessage(_ name: [UInt8]) -> Bool {
        guard let first = name.first else { return false }
        return first != UInt8(ascii: ".") && !name.contains(0x2F) && !name.contains(0)
    }

    /// The unique part (everything before the info): stable when the message moves from `new/` to
    /// `cur/` and gains flags, so it identifies the message when it has no Message-ID.
    package static func unique(_ name: [UInt8], separator: UInt8 = standardSeparator) -> [UInt8] {
        guard let index = name.firstIndex(of: separator) else { return name }
        return Array(name[..<index])
    }

    /// The name in `cur/` that marks the message read: `<unique>:2,S`; flags already there are kept,
    /// `S` added once, all in ASCII order (`:2,FR` becomes `:2,FRS`). An info other than `2,`
    /// (experimental `1,` semantics) is replaced.
    package static func readName(_ name: [UInt8], separator: UInt8 = standardSeparator) -> [UInt8] {
        let base = unique(name, separator: separator)
        var flags: [UInt8] = [UInt8(ascii: "S")]
        let info = name.dropFirst(base.count + 1)
        if name.count > base.count, info.starts(with: [UInt8(ascii: "2"), UInt8(ascii: ",")]) {
            flags += info.dropFirst(2).filter { ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) }
        }
        let sortedFlags = Array(Set(flags)).sorted()
        return base + [separator, UInt8(ascii: "2"), UInt8(ascii: ",")] + sortedFlags
    }

    /// ``readName(_:separator:)`` for a name given as text.
    package static func readName(_ name: String, separator: Character = ":") -> String {
        let bytes = readName(Array(name.utf8), separator: separator.asciiValue ?? standardSeparator)
        return String(decoding: bytes, as: UTF8.self)
    }
}
