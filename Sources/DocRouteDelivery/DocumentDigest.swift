import Crypto
import DocRoutePlatform
import SystemPackage

/// The SHA-256 by which ``LedgerRebuild`` recognises a document in a sandbox, read within a
/// deadline and by the file's allocated data only.
///
/// A file without holes gets the plain SHA-256 of its bytes, the digest its delivery recorded. A
/// file with holes (`SEEK_HOLE` finds one before its end) is digested by its data extents only:
/// each one's offset and length, then its bytes; holes are never read. A handler's 16 TiB sparse
/// file with a few bytes written costs microseconds instead of hours. Such a digest is written
/// `sparse-<hex>`, so it never equals a plain one: a sparse document is recognised again by a
/// later rebuild, and one delivered dense and made sparse since is owed to its handler again
/// (a handler may hear of a document twice, never of none).
enum DocumentDigest {
    /// The deadline passed before the digest was complete.
    struct OverTime: Error, CustomStringConvertible {
        /// The file being read then.
        var path: String
        var description: String { "\(path) was not digested in the time allowed" }
    }

    /// The digest of the open regular file `descriptor` (`size` bytes by its status).
    /// - Throws: ``OverTime`` once `deadline` has passed; ``DeliveryError`` when it cannot be read.
    static func sha256(of descriptor: FileDescriptor, size: Int64, describing path: String, deadline: ContinuousClock.Instant,
                       buffer: UnsafeMutableRawBufferPointer) throws -> String {
        // A file system that cannot tell holes reports the end of the file (or refuses): dense.
        let firstHole = (try? descriptor.nextHole(from: 0)) ?? size
        let sparse = firstHole < size
        var hash = SHA256()
        var position: Int64 = 0
        while position < size {
            var end = size
            if sparse {
                guard let start = try DeliveryError.performing("seek data in", path, { try descriptor.nextData(from: position) }) else { break }
                end = min(size, try DeliveryError.performing("seek a hole in", path) { try descriptor.nextHole(from: start) } ?? size)
                guard start < end else { break }
                position = start
                var header = [UInt8](repeating: 0, count: 16)
                for index in 0..<8 {
                    header[index] = UInt8(truncatingIfNeeded: start >> (8 * index))
                    header[8 + index] = UInt8(truncatingIfNeeded: (end - start) >> (8 * index))
                }
                hash.update(data: header)
            }
            while position < end {
                if ContinuousClock.now >= deadline { throw OverTime(path: path) }
                let wanted = Int(min(Int64(buffer.count), end - position))
                let count = try DeliveryError.performing("read", path) {
                    try descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]), atOffset: position)
                }
                if count == 0 { return finish(hash, sparse: sparse) }
                hash.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                position += Int64(count)
            }
        }
        return finish(hash, sparse: sparse)
    }

    private static func finish(_ hash: SHA256, sparse: Bool) -> String {
        (sparse ? "sparse-" : "") + SandboxWriter.hex(hash.finalize())
    }
}
