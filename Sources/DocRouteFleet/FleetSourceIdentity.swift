/// The stable text of a source file's identity, by which intake finds a source it committed before
/// (after a crash between the commit and the source's removal): the same file on the same host
/// gives the same text, a file replaced or changed in place a different one.
package enum FleetSourceIdentity {
    /// `host device:inode size mtime-ns path`: the path last, so a space in it cannot make two
    /// identities read alike (a host name has none).
    package static func text(host: String, device: UInt64, inode: UInt64, size: Int64, modificationNanoseconds: Int64, path: String) -> String {
        "\(host) \(device):\(inode) \(size) \(modificationNanoseconds) \(path)"
    }
}
