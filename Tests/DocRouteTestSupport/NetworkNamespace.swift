import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A network namespace of its own for one test, joined to the machine's by a veth pair on a /30
/// network of its own: the machine's end holds ``outerAddress``, the namespace's end
/// ``innerAddress``, and nothing else is routed. A process started with ``exec`` before its
/// command line sees only that link (and a loopback of its own); files and Unix sockets stay
/// shared, since the mount namespace is the machine's.
///
/// ``partition()`` takes the namespace's end of the link down, a real partition: the process
/// keeps running and its connections stay open, but no packet passes until ``heal()``.
/// ``remove()`` (call it in the test's tear-down) deletes the pair and the namespace.
///
/// Needs root and iproute2's `ip`; without `ip` ``init()`` throws, so the test fails and says
/// what to install.
public final class NetworkNamespace: @unchecked Sendable {
    /// iproute2's program.
    public let ip: String
    /// The namespace's name (`ip netns list`).
    public let name: String
    /// The veth end on the machine's side.
    public let outerInterface: String
    /// The veth end inside the namespace.
    public let innerInterface: String
    /// The machine's address on the link.
    public let outerAddress: String
    /// The namespace's address on the link.
    public let innerAddress: String
    /// The link's network, as CIDR (`10.213.7.4/30`).
    public let network: String

    /// Makes the namespace, the veth pair and the addresses, both ends up; what was made is removed
    /// again when a step fails.
    public init() throws {
        guard let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw TestSupportError("iproute2's ip is not installed; a test of a network partition needs it: apt-get install iproute2")
        }
        self.ip = ip
        // Names unique to this run (interface names are at most 15 bytes).
        let tag = String(format: "%06x", UInt32.random(in: 0..<0x100_0000))
        name = "docroute-\(getpid())-\(tag)"
        outerInterface = "drv\(tag)o"
        innerInterface = "drv\(tag)i"
        // A /30 in 10.200.0.0/13 that no route of the machine covers already.
        let routes = (try? Self.run(ip, ["-4", "-o", "route", "show", "table", "all"])) ?? ""
        var chosen: (Int, Int, Int)?
        for _ in 0..<32 {
            let candidate = (200 + Int.random(in: 0..<8), Int.random(in: 0..<256), Int.random(in: 0..<64) * 4)
            if !routes.contains("10.\(candidate.0).\(candidate.1).") {
                chosen = candidate
                break
            }
        }
        guard let (second, third, fourth) = chosen else { throw TestSupportError("no free /30 in 10.200.0.0/13 for a test's veth pair") }
        let prefix = "10.\(second).\(third)."
        outerAddress = prefix + "\(fourth + 1)"
        innerAddress = prefix + "\(fourth + 2)"
        network = prefix + "\(fourth)/30"
        do {
            try Self.run(ip, ["netns", "add", name])
            try Self.run(ip, ["link", "add", outerInterface, "type", "veth", "peer", "name", innerInterface, "netns", name])
            try Self.run(ip, ["addr", "add", outerAddress + "/30", "dev", outerInterface])
            try Self.run(ip, ["link", "set", outerInterface, "up"])
            try Self.run(ip, ["-n", name, "addr", "add", innerAddress + "/30", "dev", innerInterface])
            try Self.run(ip, ["-n", name, "link", "set", innerInterface, "up"])
            try Self.run(ip, ["-n", name, "link", "set", "lo", "up"])
        } catch {
            remove()
            throw error
        }
    }

    /// The command line that runs a program inside the namespace: put it before the program's.
    public var exec: [String] { [ip, "netns", "exec", name] }

    /// Takes the namespace's end of the link down: nothing passes between it and the machine.
    public func partition() throws {
        try Self.run(ip, ["-n", name, "link", "set", innerInterface, "down"])
    }

    /// Brings the namespace's end of the link up again (its address and route come back with it).
    public func heal() throws {
        try Self.run(ip, ["-n", name, "link", "set", innerInterface, "up"])
    }

    /// Whether the namespace's end of the link is up, as the kernel says (`UP` among its flags).
    public var isLinkUp: Bool {
        guard let line = try? Self.run(ip, ["-n", name, "-o", "link", "show", innerInterface]),
              let open = line.firstIndex(of: "<"), let close = line.firstIndex(of: ">") else { return false }
        return line[line.index(after: open)..<close].split(separator: ",").contains("UP")
    }

    /// Runs `arguments` with `ip` inside the namespace (`ip -n NAME ...`), returning its output.
    @discardableResult
    public func ipInside(_ arguments: [String]) throws -> String {
        try Self.run(ip, ["-n", name] + arguments)
    }

    /// Deletes the veth pair (both ends go with either) and the namespace; harmless when they are
    /// gone already.
    public func remove() {
        _ = try? Self.run(ip, ["link", "del", outerInterface])
        _ = try? Self.run(ip, ["netns", "del", name])
    }

    /// Whether a namespace of this name exists now.
    public var exists: Bool {
        ((try? Self.run(ip, ["netns", "list"])) ?? "").split(separator: "\n").contains { $0.split(separator: " ").first.map(String.init) == name }
    }

    /// Runs `program` to its end; its output (stdout and stderr) on success, a thrown error with it
    /// otherwise.
    @discardableResult
    static func run(_ program: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw TestSupportError("\(program) \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(text)")
        }
        return text
    }
}
