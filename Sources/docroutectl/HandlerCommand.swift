import Foundation
import DocRoutePlatform
import SystemPackage

/// The program `subscribe --exec` runs for each document, with the document as its last argument.
///
/// Arguments are bytes: a file name in a handler's sandbox need not be UTF-8, and the child
/// must get exactly the bytes of the path. The child's standard output goes to standard error,
/// so `subscribe`'s standard output stays one JSON line per event; its standard input is
/// /dev/null.
struct HandlerCommand: Sendable {
    /// A command that could not be started.
    struct LaunchFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// How the child ended.
    enum Outcome: Sendable, Equatable {
        case exited(Int32)
        case killed(signal: Int32)

        /// Exit status 0: the handler took the document.
        var handled: Bool { self == .exited(0) }

        var summary: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .killed(let signal): "was killed by signal \(signal)"
            }
        }
    }

    /// The program and its first arguments.
    let words: [String]

    /// `--exec cmd arg…` gives the words as they are; `--exec "cmd arg…"` (one argument, as a
    /// systemd unit's `${HANDLER_COMMAND}` passes it) is split like a shell would.
    init(arguments: [String]) throws(LaunchFailure) {
        var words = arguments
        if arguments.count == 1 {
            do {
                words = try ShellWords.split(arguments[0])
            } catch {
                throw LaunchFailure(description: "--exec: \(error)")
            }
        }
        guard let program = words.first, !program.isEmpty else {
            throw LaunchFailure(description: "--exec needs a command, e.g. --exec /usr/local/bin/open-molecule --verbose")
        }
        self.words = words
        guard Self.resolve(program) != nil else {
            throw LaunchFailure(description: "--exec: '\(program)' is not an executable file\(program.contains("/") ? "" : " in PATH")")
        }
    }

    /// Where exec would find the program: itself when it names a path, else the first match in PATH.
    static func resolve(_ program: String) -> String? {
        if program.contains("/") { return FilePath(program).isAccessible(.execute) ? program : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (folder.isEmpty ? "." : String(folder)) + "/" + program
            if (try? FilePath(candidate).status(followingSymbolicLinks: true))?.isRegularFile == true,
               FilePath(candidate).isAccessible(.execute) {
                return candidate
            }
        }
        return nil
    }

    /// Runs the command with `target` appended and waits for it.
    ///
    /// - Parameters:
    ///   - target: The last argument, as bytes (a path or a URL).
    ///   - environment: Added to (and overriding) this process's environment.
    func run(target: [UInt8], environment: [String: String]) async throws(LaunchFailure) -> Outcome {
        let child = try spawn(arguments: words.map { Array($0.utf8) } + [target], environment: environment)
        let status = await Self.waitForExit(child)
        // The wait status layout of Linux: low 7 bits the signal, else the exit status in bits 8-15.
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .killed(signal: signal)
    }

    private func spawn(arguments: [[UInt8]], environment: [String: String]) throws(LaunchFailure) -> ChildProcess {
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        do throws(Errno) {
            return try ChildProcess.spawn(arguments: arguments, environment: merged)
        } catch {
            throw LaunchFailure(description: "cannot run \(words[0]): \(error.systemMessage)")
        }
    }

    /// waitpid blocks, so it runs on a thread of its own rather than in the cooperative pool.
    private static func waitForExit(_ child: ChildProcess) async -> Int32 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            Thread {
                // ECHILD: someone else reaped it; nothing says it succeeded.
                let status = (try? child.waitForExit()) ?? 0x7F00
                continuation.resume(returning: status)
            }.start()
        }
    }
}
