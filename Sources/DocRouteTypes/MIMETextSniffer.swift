/// The spec's last resort: does a file's head look like text or like binary data?
///
/// GLib's rule, measured against `gio info`: text when the first ``controlWindow`` bytes hold no
/// ASCII control character other than tab, line feed and carriage return (xdgmime's fallback), or
/// when the first ``wholeWindow`` bytes hold none other than those, backspace and form feed (GLib's
/// second look, so a formatted man page with overstrikes is text). Bytes with the high bit set never
/// make a file binary: the spec notes they appear in UTF-8 text, and Latin-1 text is text too.
public enum MIMETextSniffer {
    /// How many leading bytes xdgmime checks for control characters (the spec suggests 128).
    public static let controlWindow = 128
    /// How many leading bytes GLib's second look checks (its sniff buffer).
    public static let wholeWindow = 4096

    /// Whether `head` looks like text. An empty head counts as text, as in GIO.
    public static func looksLikeText(_ head: [UInt8]) -> Bool {
        head.withUnsafeBytes { looksLikeText($0) }
    }

    /// Whether `head` looks like text. An empty head counts as text, as in GIO.
    public static func looksLikeText(_ head: UnsafeRawBufferPointer) -> Bool {
        var clean = true
        for index in 0..<min(head.count, controlWindow) {
            let byte = head[index]
            if byte < 0x20, byte != 0x09, byte != 0x0A, byte != 0x0D {
                clean = false
                break
            }
        }
        if clean { return true }
        for index in 0..<min(head.count, wholeWindow) {
            let byte = head[index]
            if byte == 0x7F { return false }
            if byte < 0x20, byte != 0x08, byte != 0x09, byte != 0x0A, byte != 0x0C, byte != 0x0D { return false }
        }
        return true
    }
}
