import ArgumentParser
import DocRouteConfiguration

/// `docroutectl`: the administrator's and handler author's tool.
@main
struct DocRouteCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docroutectl",
        abstract: "Inspect types and handlers, route documents, and talk to docrouted.",
        version: "docroutectl \(DocRouteVersion.number)",
        subcommands: [
            TypeCommand.self, RouteCommand.self, HandlersCommand.self, DefaultCommand.self, QuarantineCommand.self, SubscribeCommand.self,
            OpenCommand.self, BookmarkCommand.self, StatusCommand.self, HistoryCommand.self, RedeliverCommand.self, MailCommand.self,
        ])
}
