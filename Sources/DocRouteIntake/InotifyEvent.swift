import DocRoutePlatform
import NIOCore

/// One inotify event, decoded from the kernel's `struct inotify_event` records.
package struct InotifyEvent: Sendable, Hashable {
    package var watchDescriptor: Int32
    package var mask: InotifyMask
    package var cookie: UInt32
    /// The entry's name inside the watched folder, as raw bytes (names need not be UTF-8).
    package var name: [UInt8]

    package var isArrival: Bool { !mask.isDisjoint(with: [.closeWrite, .movedTo]) }
    package var isDirectory: Bool { mask.contains(.isDirectory) }
    package var isOverflow: Bool { mask.contains(.queueOverflow) }
    /// The watched folder itself went away (deleted, moved, or its watch was removed).
    package var isWatchGone: Bool { !mask.isDisjoint(with: [.deleteSelf, .moveSelf, .ignored]) }

    /// Decodes every complete record in `buffer`. inotify never splits a record across reads, so
    /// a trailing partial record means a corrupt read; it is dropped and reported by the count.
    package static func decode(_ buffer: inout ByteBuffer) -> [InotifyEvent] {
        var events: [InotifyEvent] = []
        let header = 16
        while buffer.readableBytes >= header {
            let start = buffer.readerIndex
            guard let wd = buffer.getInteger(at: start, endianness: .host, as: Int32.self),
                  let mask = buffer.getInteger(at: start + 4, endianness: .host, as: UInt32.self),
                  let cookie = buffer.getInteger(at: start + 8, endianness: .host, as: UInt32.self),
                  let length = buffer.getInteger(at: start + 12, endianness: .host, as: UInt32.self),
                  buffer.readableBytes >= header + Int(length)
            else { break }
            var name = buffer.getBytes(at: start + header, length: Int(length)) ?? []
            // The name is NUL-padded to an alignment boundary.
            if let end = name.firstIndex(of: 0) { name.removeSubrange(end...) }
            buffer.moveReaderIndex(forwardBy: header + Int(length))
            events.append(InotifyEvent(watchDescriptor: wd, mask: InotifyMask(rawValue: mask), cookie: cookie, name: name))
        }
        return events
    }
}
