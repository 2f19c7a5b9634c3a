import ArgumentParser
import DocRouteClient
import DocRoutePlatform
import Foundation

/// `docroutectl status`: what docrouted is doing now.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Ask docrouted for its handlers, inboxes and failed manifests.",
        discussion: """
            For each handler: whether a connection is subscribed as it ("running"), how many \
            documents wait for an acknowledgement, how many of those are in flight on its \
            connection, how many it got today, and the last error that concerned it. For each \
            inbox: its folder, the files seen there and not yet delivered, the files quarantined \
            since docrouted started, and its mailboxes. While a scan's files or a handler's \
            backlog are worked through, a progress bar shows how far, how fast, and the time left. \
            Status is for root and members of docrouted's admin_group. --json prints docrouted's \
            reply as one line of JSON; --watch asks again every --interval seconds until interrupted.
            """)

    @OptionGroup var daemon: DaemonSocketOptions

    @Flag(help: "Print docrouted's status reply as one JSON line.")
    var json = false

    @Flag(help: "Ask again every --interval seconds, until interrupted.")
    var watch = false

    @Option(help: ArgumentHelp("Seconds between two requests with --watch.", valueName: "seconds"))
    var interval: Double = 2

    func validate() throws {
        guard interval >= 0.1 else { throw ValidationError("--interval must be at least 0.1 seconds") }
    }

    func run() async throws {
        let connection = try await daemon.connectReporting()
        // Clearing the screen only makes sense on a terminal; a pipe gets one report after another.
        let clear = watch && !json && StandardStream.output.isTerminal
        repeat {
            let report: StatusReport
            do {
                report = try await connection.status()
            } catch {
                await connection.close()
                throw error.report("get the status of docrouted")
            }
            if json {
                let reply = DaemonMessage.status(id: nil, handlers: report.handlers, inboxes: report.inboxes, extra: report.extra)
                StandardStreams.output(reply.encodedLine())
            } else {
                let text = StatusView(report: report, socketPath: daemon.path).lines.joined(separator: "\n") + "\n"
                StandardStreams.output(Array(((clear ? "\u{1B}[H\u{1B}[2J" : "") + text + (watch && !clear ? "\n" : "")).utf8))
            }
            if watch { try? await Task.sleep(for: .milliseconds(Int(interval * 1000))) }
        } while watch && !Task.isCancelled
        await connection.close()
    }
}
