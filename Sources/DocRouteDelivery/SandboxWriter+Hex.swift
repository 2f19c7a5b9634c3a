extension SandboxWriter {
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lowercase hexadecimal of bytes (a SHA-256 digest, random bytes of a temporary's name).
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
