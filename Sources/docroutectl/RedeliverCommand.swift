import ArgumentParser
import DocRouteClient
import DocRouteProtocol
import Foundation

/// `docroutectl redeliver`: an acknowledged or declined document sent to its handler again.
struct RedeliverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "redeliver",
        abstract: "Send acknowledged or declined documents to their handlers again.",
        discussion: """
            Each delivery id given (as docroutectl history prints it), or with --declined every \
            declined document (of --handler only, when given), is made owed to its handler again: \
            the handler gets a new openURL (or launch) event naming the same copy in its sandbox, \
            and the document's history shows it redelivered. A copy that is gone from the sandbox \
            (removed by the handler or by retention) cannot be sent again: that id is named and \
            the command exits 1. Asks docrouted over its socket (the `redeliver` request), for \
            root and members of its admin_group.
            """)

    @Argument(help: ArgumentHelp("Delivery ids to send again.", valueName: "delivery-id"))
    var deliveryIDs: [String] = []

    @Flag(help: "Every declined document (of --handler, when given).")
    var declined = false

    @Option(name: .customLong("handler"), help: ArgumentHelp("With --declined: only this handler's.", valueName: "bundle-id"))
    var bundleIdentifier: String?

    @OptionGroup var daemon: DaemonSocketOptions

    func validate() throws {
        guard declined != !deliveryIDs.isEmpty else { throw ValidationError("give delivery ids, or --declined (not both)") }
        if bundleIdentifier != nil && !declined { throw ValidationError("--handler goes with --declined") }
    }

    func run() async throws {
        let connection = try await daemon.connectReporting()
        let results: [JSONValue]
        do {
            results = try await connection.redeliver(deliveryIDs, declined: declined, bundleIdentifier: bundleIdentifier)
        } catch {
            await connection.close()
            if error.code == .daemon(.notPermitted) {
                StandardStreams.error("\(error.message)\n  Run as root or as a member of docrouted's admin_group.")
                throw ExitCode.failure
            }
            throw error.report("send the documents again")
        }
        await connection.close()
        if results.isEmpty {
            StandardStreams.output(line: "nothing declined\(bundleIdentifier.map { " for \($0)" } ?? "") to send again")
            return
        }
        var failed = 0
        for result in results {
            guard let object = result.objectValue else { continue }
            let message = object["message"]?.stringValue ?? "\(result)"
            if object["outcome"]?.stringValue == "redelivered" {
                StandardStreams.output(line: "redelivered: \(message)")
            } else {
                failed += 1
                StandardStreams.error("not sent: \(message)")
            }
        }
        if failed > 0 { throw ExitCode.failure }
    }
}
