import ArgumentParser

/// `docroutectl mail …`: the mail drop, seen from the administrator's side.
struct MailCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mail",
        abstract: "Look into mail as the mail drop reads it.",
        subcommands: [MailInspectCommand.self])
}
