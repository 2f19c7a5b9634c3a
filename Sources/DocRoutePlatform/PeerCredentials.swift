/// Who is at the other end of a Unix socket, from `SO_PEERCRED`: the kernel's word, not the client's.
package struct PeerCredentials: Sendable, Hashable, CustomStringConvertible {
    package var pid: Int32
    package var uid: UInt32
    package var gid: UInt32

    package init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    package var description: String { "pid \(pid) uid \(uid) gid \(gid)" }
}
