/// The stable text of a source file's identity, by which intake finds a source it committed before
/// (after a crash between the commit and the source's removal): the same file on the same host
/// gives the same text, a file replaced or changed in place a different one.
package enum FleetSourceIdentity {
    /// `host device:inode size mtime-ns path`: the path last, so a space in it cannot make two
    /// identities read alike (a host name has none).
    package static func text(host: String, device: UInt64, inode: UInt64, size: Int64, modificationNanoseconds: Int64, path: String) -> String {
        prefix(host: host, device: device, inode: inode, size: size, modificationNanoseconds: modificationNanoseconds) + path
    }

    /// The part of ``text(host:device:inode:size:modificationNanoseconds:path:)`` before the path:
    /// two identities with the same prefix are the same file, whatever path it had.
    package static func prefix(host: String, device: UInt64, inode: UInt64, size: Int64, modificationNanoseconds: Int64) -> String {
        "\(host) \(device):\(inode) \(size) \(modificationNanoseconds) "
    }

    /// The path an identity names (its last field); nil when the text is not an identity.
    package static func path(of identity: String) -> String? {
        let fields = identity.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: false)
        guard fields.count == 5, fields[4].hasPrefix("/") else { return nil }
        return String(fields[4])
    }
}
