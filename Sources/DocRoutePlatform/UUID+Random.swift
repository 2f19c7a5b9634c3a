import Foundation

extension UUID {
    /// A random (version 4) UUID from the kernel's generator, `getrandom(2)`.
    ///
    /// Foundation's `UUID()` on Linux opens and reads `/dev/urandom` and ignores a failed open or
    /// read, leaving the bytes zero: under I/O faults (or with no descriptor left) every
    /// identifier made meanwhile is the same `00000000-0000-4000-8000-000000000000`, and the
    /// second delivery given it cannot be recorded (`UNIQUE constraint failed:
    /// delivery.deliveryID`). `getrandom` opens nothing and does not fail that way.
    package static func random() -> UUID {
        var bytes = [UInt8](repeating: 0, count: 16)
        do {
            try bytes.withUnsafeMutableBytes { try RandomBytes.fill($0) }
        } catch {
            // getrandom refused (a kernel before 3.17, a seccomp filter): the standard library's
            // generator, which stops the process rather than hand out bytes it did not get.
            var generator = SystemRandomNumberGenerator()
            for index in bytes.indices { bytes[index] = generator.next() }
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
