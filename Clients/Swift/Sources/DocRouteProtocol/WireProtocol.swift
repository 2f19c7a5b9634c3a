/// Constants of the docroute wire protocol (`docs/PROTOCOL.md`).
public enum WireProtocol {
    /// The protocol version this library speaks, sent in `hello` and `welcome`.
    public static let version = 1

    /// The longest line either side accepts, in bytes, not counting the terminating `\n`.
    public static let maximumLineLength = 1 << 20

    /// Where the daemon listens unless its configuration names another path.
    public static let defaultSocketPath = "/run/docroute/docroute.sock"

    /// The environment variable through which a client can be pointed at another socket.
    public static let socketPathEnvironmentVariable = "DOCROUTE_SOCKET"
}
