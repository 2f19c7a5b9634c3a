import Foundation

extension DaemonHarness {
    /// Runs `executable` with `arguments`, `environment` added to this process's, to its end: its
    /// exit status and what it wrote to standard output and standard error, together.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    /// `docrouted --check` of the configuration at `config`: its exit status and output.
    static func check(config: String, environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        try run(binDirectory + "/docrouted", ["--check", "--config", config], environment: environment)
    }

    /// `docrouted --check` of this harness's configuration.
    func check(environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        try Self.check(config: configPath, environment: environment)
    }
}
