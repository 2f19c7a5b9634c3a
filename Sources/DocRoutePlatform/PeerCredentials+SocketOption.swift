import CDocRouteShim

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension PeerCredentials {
    /// `SO_PEERCRED`'s value as the kernel writes it (`struct ucred`, three 32-bit fields): the
    /// type to read the option as with a library's own `getsockopt` (SwiftNIO's
    /// `SocketOptionProvider`, which keeps a channel's descriptor to itself).
    package typealias SocketOptionValue = docroute_peer_credentials

    /// `SOL_SOCKET`, the level of ``socketOptionName``.
    package static var socketOptionLevel: Int32 { SOL_SOCKET }
    /// `SO_PEERCRED`.
    package static var socketOptionName: Int32 { SO_PEERCRED }

    /// The credentials in a ``SocketOptionValue``.
    package init(socketOptionValue value: SocketOptionValue) {
        self.init(pid: value.pid, uid: value.uid, gid: value.gid)
    }
}
