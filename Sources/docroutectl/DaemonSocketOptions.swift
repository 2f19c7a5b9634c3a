import ArgumentParser
import DocRouteClient

/// `--socket`, shared by the commands that talk to docrouted.
struct DaemonSocketOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "docrouted's socket (default: $DOCROUTE_SOCKET, else /run/docroute/docroute.sock).",
            valueName: "path"))
    var socket: String?

    /// The socket to connect to.
    var path: String { socket ?? DocRouteConnection.defaultSocketPath() }

    /// Connects quietly: the commands report failures themselves, on standard error.
    func connect() async throws(DocRouteClientError) -> DocRouteConnection {
        try await DocRouteConnection.connect(socketPath: path, logger: HandlerOptions.logger)
    }
}
