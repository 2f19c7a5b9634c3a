import DocRouteClient
import DocRouteHandlers
import DocRouteIntake
import Foundation

/// The connection `docroutectl quarantine release` opens to docrouted, once and only when an entry
/// needs it: a mail attachment, which docrouted delivers from its message (`release`), and a file
/// sent to a handler the user picked (`--to`: `open` with `bundleIdentifier`, the file passed as
/// an open descriptor, as `docroutectl open --with` sends it).
struct ReleaseConnection {
    /// `--socket`, if given.
    let socket: String?
    let options: HandlerOptions
    /// `quarantine_directory` as the configuration spells it: docrouted takes entries by that path.
    let quarantine: String
    private var connection: DocRouteConnection?

    init(socket: String?, options: HandlerOptions, quarantine: String) {
        self.socket = socket
        self.options = options
        self.quarantine = quarantine.hasSuffix("/") ? String(quarantine.dropLast()) : quarantine
    }

    /// Delivers a quarantined mail attachment from its message; returns the line to print.
    mutating func releasePart(_ file: QuarantinedFile, to bundleIdentifier: String?) async throws(CtlError) -> String {
        guard let part = file.mailPart else { throw CtlError("not a mail attachment entry") }
        let connection = try await connect(for: "a mail attachment is delivered from its message by docrouted")
        let entry = quarantine + "/" + file.mailbox + "/" + (file.path as NSString).lastPathComponent
        let released: ReleasedPart
        do {
            released = try await connection.release(quarantineEntry: entry, bundleIdentifier: bundleIdentifier)
        } catch {
            throw Self.refusal(error)
        }
        let what = "part \(part.partPath) (\(part.fileName)) of \(part.messageID)"
        guard let deliveryID = released.deliveryID, let bundle = released.bundleIdentifier else {
            return "released \(file.path): \(what) was delivered already; its entry is removed"
        }
        return "released \(file.path): \(what) → \(bundle) (delivery \(deliveryID))"
    }

    /// Sends a quarantined file to `bundleIdentifier`, one of its candidates, then removes it and
    /// its reason; returns the line to print.
    mutating func send(_ file: QuarantinedFile, to bundleIdentifier: String) async throws(CtlError) -> String {
        guard file.isRegularFile else {
            throw CtlError("not a regular file (a link, a FIFO or a folder is never delivered); remove it by hand")
        }
        let connection = try await connect(for: "--to sends the file through docrouted")
        let url: String
        do {
            url = try OpenCommand.url(for: file.path)
        } catch {
            throw CtlError("\(error)")
        }
        let opened: OpenedDocument
        do {
            if (try? await connection.offers(.openDescriptor)) == true {
                var passed: OpenedFile
                do {
                    passed = try OpenedFile(url: url, shown: file.path)
                } catch {
                    throw CtlError("cannot open it: \(error)")
                }
                defer { passed.close() }
                // The name it came with, not the quarantine's counter: it is typed and named by it.
                passed.name = file.originalName
                opened = try await connection.open(fileDescriptor: passed.descriptor, name: passed.name, mailbox: file.mailbox, bundleIdentifier: bundleIdentifier)
            } else {
                opened = try await connection.open(url: url, mailbox: file.mailbox, bundleIdentifier: bundleIdentifier)
            }
        } catch let error as CtlError {
            throw error
        } catch let error as DocRouteClientError {
            throw Self.refusal(error)
        } catch {
            throw CtlError("\(error)")
        }
        // Delivered and committed: the quarantined copy and its reason go.
        try? FileManager.default.removeItem(atPath: file.path)
        try? FileManager.default.removeItem(atPath: file.path + SandboxName.quarantineReasonSuffix)
        return "released \(file.path) → \(opened.bundleIdentifier) (delivery \(opened.deliveryID)\(opened.contentType.map { ", \($0)" } ?? ""))"
    }

    /// Closes the connection if one was opened.
    func close() async {
        await connection?.close()
    }

    private mutating func connect(for reason: String) async throws(CtlError) -> DocRouteConnection {
        if let connection { return connection }
        let (path, origin) = try DaemonSocketOptions.resolve(socket: socket, options.configurationOptions)
        do {
            let connection = try await DocRouteConnection.connect(socketPath: path, logger: HandlerOptions.logger)
            self.connection = connection
            return connection
        } catch {
            throw CtlError("\(reason), and its socket \(path) (\(origin)) does not answer: \(error.message); start docrouted (systemctl start docroute.socket) and run this again")
        }
    }

    /// docrouted's refusal as the user reads it: its message, which names what to do (the
    /// candidates, for a handler that is not one).
    private static func refusal(_ error: DocRouteClientError) -> CtlError {
        switch error.code {
        case .daemon(.notPermitted):
            CtlError("\(error.message); run as root or as a member of docrouted's admin_group")
        default:
            CtlError(error.message)
        }
    }
}
