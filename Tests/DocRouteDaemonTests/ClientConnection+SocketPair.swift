import DocRouteTestSupport
import SystemPackage
import Testing
@testable import DocRoutePlatform
@testable import DocRouteServer

#if canImport(Glibc)
import Glibc
#endif

extension ClientConnection {
    /// A connection as the server makes it for a root peer, over one end of a socket pair, and a
    /// ``LineClient`` on the other end: what the daemon sends arrives there as JSON lines.
    static func socketPair(id: UInt64, timeout: Double = 5) throws -> (connection: ClientConnection, peer: LineClient) {
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        let connection = ClientConnection(id: id, credentials: PeerCredentials(pid: getpid(), uid: 0, gid: 0),
                                          writer: DescriptorSocketWriter(descriptor: FileDescriptor(rawValue: pair[0])))
        return (connection, LineClient(descriptor: pair[1], timeout: timeout))
    }
}
