/// One event of an inotify instance as the kernel queues it (`struct inotify_event`), for a reader
/// that polls the instance itself rather than through an event loop.
package struct InotifyRecord: Sendable, Hashable {
    /// The watch the event belongs to (``FileDescriptor/addInotifyWatch(path:mask:)``'s result).
    package var watchDescriptor: Int32
    package var mask: InotifyMask
    /// The name inside the watched folder, as raw bytes without the kernel's NUL padding; empty
    /// for an event of the folder itself.
    package var name: [UInt8]

    package init(watchDescriptor: Int32, mask: InotifyMask, name: [UInt8]) {
        (self.watchDescriptor, self.mask, self.name) = (watchDescriptor, mask, name)
    }

    /// Every complete record in `bytes` (one read's worth). The kernel never splits a record
    /// across reads, so a partial one at the end is a corrupt read and is dropped.
    package static func decode(_ bytes: UnsafeRawBufferPointer) -> [InotifyRecord] {
        // wd, mask, cookie, len: four 32-bit fields.
        let header = 16
        var records: [InotifyRecord] = []
        var offset = 0
        while offset + header <= bytes.count {
            let watch = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let nameStart = offset + header
            guard nameStart + length <= bytes.count else { break }
            let name = Array(bytes[nameStart..<(nameStart + length)].prefix { $0 != 0 })
            records.append(InotifyRecord(watchDescriptor: watch, mask: InotifyMask(rawValue: mask), name: name))
            offset = nameStart + length
        }
        return records
    }
}
