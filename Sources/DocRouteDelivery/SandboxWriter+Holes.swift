import Crypto
import DocRoutePlatform
import SystemPackage

/// Copies that keep a sparse source's holes.
///
/// `copy_file_range` fills the holes of a sparse file on most file systems without reflinks (ext4
/// among them), and so does a copy through a buffer: a 1 GiB file of 8 allocated blocks took 1 GiB
/// of disk in every sandbox it went to. Any user can make such a file and pass it to `open`, so the
/// copy of a sparse source copies its data ranges only (found with `SEEK_DATA` and `SEEK_HOLE`) and
/// leaves the rest a hole: the copy takes about the disk its source takes, and reads back the same
/// bytes.
extension SandboxWriter {
    /// Holes smaller than this in all are copied as zeros: they cost the disk at most this much,
    /// and a file without holes keeps the faster kernel copy.
    static let sparseThreshold: Int64 = 1 << 20

    /// Whether a source of this status is copied range by range, its holes left holes: it takes at
    /// least ``sparseThreshold`` fewer bytes of disk than its size.
    static func copiesKeepingHoles(_ status: FileStatus) -> Bool {
        guard let allocated = status.allocatedBytes else { return false }
        return status.size - allocated >= sparseThreshold
    }

    /// Copies bytes `0..<size` of `source` to the same offsets of `destination` (a new, empty
    /// file): the ranges holding data through `buffer` with `pread`/`pwrite`, each hole skipped,
    /// then the size set (a hole at the end has no data to write). `hash`, when given, sees every
    /// byte in order, a hole's as zeros, so the digest is that of the bytes the copy reads back.
    ///
    /// - Throws: ``DeliveryError``; ``DeliveryErrorCode/changed`` when the source ends early.
    static func copyKeepingHoles(
        from source: FileDescriptor, size: Int64, describing sourcePath: String,
        to destination: FileDescriptor, describing destinationPath: String,
        buffer: UnsafeMutableRawBufferPointer, hash: inout SHA256?
    ) throws {
        var offset: Int64 = 0
        var zeroed = false
        while offset < size {
            let dataStart = try DeliveryError.performing("inspect", sourcePath) { try source.nextData(from: offset) } ?? size
            let start = min(dataStart, size)
            if start > offset {
                // A hole: nothing is written; the hash sees its zeros.
                if hash != nil {
                    if !zeroed {
                        buffer.initializeMemory(as: UInt8.self, repeating: 0)
                        zeroed = true
                    }
                    var left = start - offset
                    while left > 0 {
                        let count = Int(min(Int64(buffer.count), left))
                        hash?.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                        left -= Int64(count)
                    }
                }
                offset = start
                if offset >= size { break }
            }
            let holeStart = try DeliveryError.performing("inspect", sourcePath) { try source.nextHole(from: offset) } ?? size
            let end = min(max(holeStart, offset + 1), size)
            zeroed = false
            while offset < end {
                let wanted = Int(min(Int64(buffer.count), end - offset))
                let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted])
                let count = try DeliveryError.performing("read", sourcePath) { try source.read(into: chunk, atOffset: offset) }
                if count == 0 { throw truncated(sourcePath, expected: size, found: offset) }
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                hash?.update(bufferPointer: bytes)
                try DeliveryError.performing("write", destinationPath) { try destination.writeAll(from: bytes, atOffset: offset) }
                offset += Int64(count)
            }
        }
        // The length, whatever the last range was: a trailing hole is only a size.
        try DeliveryError.performing("write", destinationPath) { try destination.truncate(to: size) }
    }
}
