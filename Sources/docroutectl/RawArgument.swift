/// The exact bytes of a command-line argument.
///
/// Swift decodes `argv` as UTF-8 and replaces invalid bytes, but a Linux file name need not be
/// UTF-8; a path given on the command line must reach docrouted byte for byte.
enum RawArgument {
    /// The bytes of the `argv` entry that decodes to `argument` (the last such entry), or its
    /// UTF-8 when none does.
    static func bytes(of argument: String) -> [UInt8] {
        for index in stride(from: Int(CommandLine.argc) - 1, through: 1, by: -1) {
            guard let raw = CommandLine.unsafeArgv[index] else { continue }
            var bytes: [UInt8] = []
            var cursor = raw
            while cursor.pointee != 0 {
                bytes.append(UInt8(bitPattern: cursor.pointee))
                cursor += 1
            }
            if String(decoding: bytes, as: UTF8.self) == argument { return bytes }
        }
        return Array(argument.utf8)
    }
}
