import DocRouteConfiguration
import DocRouteFleet
import DocRouteTestSupport
import Foundation
import Logging
import SystemPackage
import Testing

/// A large document goes into the fleet and out of it again in bounded memory: its bytes are read,
/// sent, received and written a chunk at a time, never held whole.
///
/// The measurement runs in a child: this test binary again, running only ``fleetMemoryProbe()``,
/// so the peak resident size (VmHWM) is the queue's and not that of tests running alongside.
@Suite(.serialized) struct FleetQueueMemoryTests {
    static let urlVariable = "DOCROUTE_FLEET_PROBE_URL"
    static let sourceVariable = "DOCROUTE_FLEET_PROBE_SOURCE"
    static let copyVariable = "DOCROUTE_FLEET_PROBE_COPY"
    static let reportVariable = "DOCROUTE_FLEET_PROBE_REPORT"
    static let password = "s3cret-word"
    /// 96 MiB and a bit: a queue that held the document whole would grow by at least that.
    static let size = Int64(96 << 20) + 5
    /// What the probe's peak may grow over its start.
    static let growthLimitKiB = 40 * 1024

    @Test func aNinetySixMebibyteDocumentGoesThroughInBoundedMemory() async throws {
        try await FleetQueueTests().withFleet { fleet in
            let folder = fleet.folder.string
            let source = folder + "/big.bin"
            let copy = folder + "/copy.bin"
            try await runBlocking { try SparseFile.createWithThreePieces(source, size: Self.size) }
            let report = try await runBlocking {
                try Self.runProbe(environment: [
                    Self.urlVariable: fleet.server.url(user: "docroute", database: "fleet"),
                    Self.sourceVariable: source,
                    Self.copyVariable: copy,
                    Self.reportVariable: folder + "/report",
                ], log: folder + "/probe.log")
            }
            #expect(report["claims"] == "1")
            #expect(report["problem"] == nil, "\(report["problem"] ?? "")")
            let start = try #require(report["startKiB"].flatMap { Int($0) })
            let peak = try #require(report["peakKiB"].flatMap { Int($0) })
            #expect(start > 0 && peak - start < Self.growthLimitKiB, "peak resident size \(peak) KiB, \(start) KiB at start")
            #expect(try await runBlocking { SparseFile.sameBytes(source, copy) }, "the copy differs from the source")
            #expect(try await fleet.sql("SELECT count(*) FROM document_chunks") == "97")
            print("fleet streaming: \(Self.size) bytes in and out, peak resident \(peak) KiB (\(start) KiB at start)")
        }
    }

    /// Runs ``fleetMemoryProbe()`` alone in a child; its `key=value` report.
    static func runProbe(environment extra: [String: String], log: String) throws -> [String: String] {
        try MemoryProbe.run("fleetMemoryProbe", environment: extra, reportPath: extra[Self.reportVariable]!, log: log)
    }

    /// Whether this process is the child ``runProbe(environment:log:)`` started.
    static var isProbeChild: Bool {
        let environment = ProcessInfo.processInfo.environment
        return [urlVariable, sourceVariable, copyVariable, reportVariable].allSatisfy { environment[$0] != nil }
    }

    /// The child's side: runs only in the process started by ``runProbe(environment:log:)``, which
    /// makes the assertions on its report.
    @Test(.enabled(if: isProbeChild, "the memory probe runs only in the child process the memory test starts"))
    func fleetMemoryProbe() async throws {
        let environment = ProcessInfo.processInfo.environment
        let reportPath = try #require(environment[Self.reportVariable])
        let address = try FleetDatabaseAddress.parse(try #require(environment[Self.urlVariable]))
        let database = try FleetDatabase(configuration: FleetConfiguration(database: address, hostName: "probe"), password: Self.password)
        let queue = FleetQueue(database: database, hostName: "probe", logger: Logger(label: "probe", factory: { _ in SwiftLogNoOpLogHandler() }))
        let source = try FileDescriptor.open(FilePath(try #require(environment[Self.sourceVariable])), .readOnly)
        defer { try? source.close() }
        let copy = try FileDescriptor.open(FilePath(try #require(environment[Self.copyVariable])), .readWrite,
                                           options: [.create, .exclusiveCreate], permissions: [.ownerReadWrite])
        defer { try? copy.close() }
        var lines: [String] = []
        let startKiB = MemoryProbe.status("VmHWM")
        do {
            try await queue.enqueue([FleetDocument(
                deliveryID: UUID(), sourceIdentity: "probe 1:1 \(Self.size) 0 /inbox/big.bin", fileName: "big.bin",
                contentType: "public.data", extensionChain: ".bin", mailbox: "inbox", bundleIdentifier: "com.example.probe",
                sourceApplication: "", annotationJSON: "{}", size: Self.size, descriptor: source)])
            let claims = try await queue.claim(handler: "com.example.probe", limit: 5)
            lines.append("claims=\(claims.count)")
            for claim in claims { try await queue.copyBytes(of: claim.documentID, to: copy) }
        } catch {
            lines.append("problem=\(error)")
        }
        lines += ["startKiB=\(startKiB)", "peakKiB=\(MemoryProbe.status("VmHWM"))"]
        await queue.close()
        try (lines.joined(separator: "\n") + "\n").write(toFile: reportPath, atomically: false, encoding: .utf8)
    }
}
