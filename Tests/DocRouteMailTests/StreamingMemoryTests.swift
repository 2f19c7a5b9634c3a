@testable import DocRouteConfiguration
@testable import DocRouteIntake
import DocRouteMail
@testable import DocRouteMaildir
@testable import DocRoutePlatform
import DocRouteTestSupport
import Foundation
import Logging
import SystemPackage
import Testing

/// A large message streams through the extractor into a scratch file in bounded memory.
///
/// The measurement runs in a child: this test binary again, running only ``mailMemoryProbe()``,
/// so the peak resident size (VmHWM) is the extractor's and not that of tests running alongside.
/// Both sizes run by default (the large one takes a few seconds even in a debug build, and
/// ~400 MB of /tmp for a moment); `DOCROUTE_MAIL_BIG=0` skips the 150 MiB attachment (a 214 MiB message).
@Suite(.serialized) struct StreamingMemoryTests {
    static let messageVariable = "DOCROUTE_MAIL_PROBE_MESSAGE"
    static let scratchVariable = "DOCROUTE_MAIL_PROBE_SCRATCH"
    static let reportVariable = "DOCROUTE_MAIL_PROBE_REPORT"
    /// The bound the issue sets for the whole process.
    static let residentLimitKiB = 64 * 1024

    @Test func twentyMebibyteMessageStreamsInBoundedMemory() throws {
        try measure(attachmentMebibytes: 15)
    }

    @Test(.disabled(if: ProcessInfo.processInfo.environment["DOCROUTE_MAIL_BIG"] == "0", "DOCROUTE_MAIL_BIG=0"))
    func twoHundredMebibyteMessageStreamsInBoundedMemory() throws {
        try measure(attachmentMebibytes: 150)
    }

    func measure(attachmentMebibytes: Int) throws {
        try TemporaryFolder.with("mail") { temporary in
            let folder = temporary.string
            struct Generated: Decodable {
                var size: Int64
                var sha256: String
            }
            let generated = try JSONDecoder().decode(Generated.self, from: try Fixtures.python("compose.py", ["big", folder, String(attachmentMebibytes)]))
            let scratch = folder + "/scratch"
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
            let report = try runProbe(environment: [
                Self.messageVariable: folder + "/message.eml",
                Self.scratchVariable: scratch,
                Self.reportVariable: folder + "/report",
            ], log: folder + "/probe.log")

            let messageSize = try FileManager.default.attributesOfItem(atPath: folder + "/message.eml")[.size] as? NSNumber
            #expect(report["bytes"] == messageSize.map { "\($0)" })
            #expect(report["names"] == "big.bin,notes.txt")
            #expect(report["problems"] == "")
            let peak = try #require(report["peakKiB"].flatMap { Int($0) })
            #expect(peak > 0 && peak < Self.residentLimitKiB, "peak resident size \(peak) KiB")
            let bigPath = try #require(report["big"])
            #expect(report["bigSize"] == String(generated.size))
            let digest = String(decoding: try Fixtures.python("compose.py", ["sha256", bigPath]), as: UTF8.self)
            #expect(digest.trimmingCharacters(in: .whitespacesAndNewlines) == generated.sha256)
            print("mail streaming: \(report["bytes"] ?? "?") bytes in \(report["seconds"] ?? "?") s, peak resident \(peak) KiB (\(report["startKiB"] ?? "?") KiB at start)")
        }
    }

    /// Runs ``mailMemoryProbe()`` alone in a child; its `key=value` report.
    func runProbe(environment extra: [String: String], log: String) throws -> [String: String] {
        try MemoryProbe.run("mailMemoryProbe", environment: extra, reportPath: extra[Self.reportVariable]!, log: log)
    }

    /// Whether this process is the child ``runProbe(environment:log:)`` started.
    static var isProbeChild: Bool {
        let environment = ProcessInfo.processInfo.environment
        return [messageVariable, scratchVariable, reportVariable].allSatisfy { environment[$0] != nil }
    }

    /// The child's side: runs only in the process started by ``runProbe(environment:log:)``, which
    /// makes the assertions on its report.
    @Test(.enabled(if: isProbeChild, "the memory probe runs only in the child process the streaming tests start"))
    func mailMemoryProbe() throws {
        let environment = ProcessInfo.processInfo.environment
        let messagePath = try #require(environment[Self.messageVariable])
        let scratchPath = try #require(environment[Self.scratchVariable])
        let reportPath = try #require(environment[Self.reportVariable])
        let startKiB = MemoryProbe.status("VmHWM")
        let scratch = try FileDescriptor.openDirectory(atPath: FilePath(scratchPath))
        let message = try FileDescriptor.open(FilePath(messagePath), .readOnly)
        let started = ContinuousClock.now
        let extractor = MaildirAttachmentExtractor(scratch: scratch, scratchPath: scratchPath, logger: Logger(label: "probe"))
        let extraction = try extractor.extract(message: message, messagePath: messagePath)
        let elapsed = ContinuousClock.now - started
        let peakKiB = MemoryProbe.status("VmHWM")
        let big = extraction.attachments.first { $0.fileName == "big.bin" }
        let lines = [
            "startKiB=\(startKiB)",
            "peakKiB=\(peakKiB)",
            "bytes=\(extraction.summary.byteCount)",
            "seconds=\(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)",
            "names=\(extraction.attachments.map(\.fileName).joined(separator: ","))",
            "problems=\(extraction.summary.problems.map(\.description).joined(separator: ";"))",
            "big=\(big?.temporaryPath ?? "")",
            "bigSize=\(big?.size ?? -1)",
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: reportPath, atomically: false, encoding: .utf8)
    }
}
