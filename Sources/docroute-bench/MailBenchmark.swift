import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension DocRouteBench {
    struct Mail: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Messages with attachments delivered into a Maildir: messages per second until every attachment is durable and every message is in cur/.")
        @Option(help: "Messages in the burst.") var messages = 1_000
        @Option(help: "Attachments per message.") var attachments = 2
        @Option(help: "Bytes per attachment (before base64).") var attachmentSize = 100 * 1024
        @Flag var quick = false

        func run() throws {
            let count = quick ? min(messages, 50) : messages
            var rates: [Double] = []
            var peak = 0.0
            for _ in 0..<(quick ? 1 : 3) {
                let (rate, resident) = try burst(count)
                rates.append(rate)
                peak = max(peak, resident)
            }
            rates.sort()
            report("mail: \(count) messages × \(attachments) × \(attachmentSize / 1024) KiB, until all in cur/", rates[rates.count / 2], unit: "messages/s")
            report("mail: peak resident memory of docrouted", peak, unit: "MiB")
        }

        /// One burst on a fresh daemon: messages written to `tmp/` first, then renamed into `new/`
        /// as fast as possible, the way an MDA hands them over.
        func burst(_ count: Int) throws -> (rate: Double, residentMiB: Double) {
            let daemon = try BenchDaemon(name: "mail")
            defer { daemon.stop() }
            let maildir = daemon.root + "/Maildir"
            for leaf in ["tmp", "new", "cur"] {
                try FileManager.default.createDirectory(atPath: maildir + "/" + leaf, withIntermediateDirectories: true)
            }
            let configuration = try String(contentsOfFile: daemon.root + "/docroute.toml", encoding: .utf8)
            try (configuration + """

                [[inbox]]
                path = "\(maildir)"
                kind = "maildir"
                source_application = "com.apple.mobilemail"
                """).write(toFile: daemon.root + "/docroute.toml", atomically: true, encoding: .utf8)
            try Self.catchAll.write(toFile: daemon.root + "/handlers.d/everything.plist", atomically: true, encoding: .utf8)
            try daemon.start()

            var generator = SystemRandomNumberGenerator()
            var names: [String] = []
            for index in 0..<count {
                let name = "\(1_700_000_000 + index).M\(index)P\(getpid()).bench"
                let message = composeMessage(index, using: &generator)
                let fd = open(maildir + "/tmp/" + name, O_WRONLY | O_CREAT | O_EXCL, 0o600)
                guard fd >= 0 else { throw BenchError("cannot write \(maildir)/tmp/\(name)") }
                _ = message.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                close(fd)
                names.append(name)
            }
            var resident = 0.0
            let elapsed = seconds {
                for name in names { rename(maildir + "/tmp/" + name, maildir + "/new/" + name) }
                let deadline = Date().addingTimeInterval(600)
                while Self.entries(maildir + "/cur") < count && Date() < deadline {
                    resident = max(resident, daemon.peakResidentMiB)
                    usleep(2_000)
                }
            }
            let marked = Self.entries(maildir + "/cur")
            guard marked == count else { throw BenchError("only \(marked) of \(count) messages were marked read") }
            // Random bytes sometimes carry another type's magic (gzip's two bytes, say), and then
            // that type's handler takes the part: count every sandbox.
            let containers = (try? FileManager.default.contentsOfDirectory(atPath: daemon.root + "/containers")) ?? []
            let delivered = containers.reduce(0) { $0 + Self.entries(daemon.root + "/containers/\($1)/Documents/Inbox/INBOX") }
            guard delivered == count * attachments else {
                throw BenchError("\(delivered) attachments delivered, expected \(count * attachments)")
            }
            return (Double(count) / elapsed, max(resident, daemon.peakResidentMiB))
        }

        func composeMessage(_ index: Int, using generator: inout SystemRandomNumberGenerator) -> [UInt8] {
            var text = """
                From: Bench <bench@example.org>\r
                To: inbox@example.org\r
                Subject: benchmark message \(index)\r
                Message-ID: <bench-\(index)-\(getpid())@example.org>\r
                Date: Sun, 22 Nov 2026 01:00:00 +0000\r
                MIME-Version: 1.0\r
                Content-Type: multipart/mixed; boundary="bench-boundary"\r
                \r
                --bench-boundary\r
                Content-Type: text/plain; charset=utf-8\r
                \r
                Two attachments for the benchmark.\r

                """
            for part in 0..<attachments {
                var payload = [UInt8](repeating: 0, count: attachmentSize)
                for offset in stride(from: 0, to: payload.count, by: 8) {
                    let word = generator.next() as UInt64
                    withUnsafeBytes(of: word) { bytes in
                        for byte in 0..<min(8, payload.count - offset) { payload[offset + byte] = bytes[byte] }
                    }
                }
                text += """
                    --bench-boundary\r
                    Content-Type: application/octet-stream\r
                    Content-Disposition: attachment; filename="part-\(index)-\(part).bin"\r
                    Content-Transfer-Encoding: base64\r
                    \r
                    \(Data(payload).base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed]))\r

                    """
            }
            text += "--bench-boundary--\r\n"
            return Array(text.utf8)
        }

        static let bundle = "org.docroute.bench.everything"
        static let catchAll = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
              <key>CFBundleIdentifier</key><string>\(bundle)</string>
              <key>CFBundleDocumentTypes</key><array><dict>
                <key>CFBundleTypeRole</key><string>Viewer</string>
                <key>LSHandlerRank</key><string>Alternate</string>
                <key>LSItemContentTypes</key><array><string>public.data</string></array>
              </dict></array>
            </dict></plist>
            """

        static func entries(_ path: String) -> Int {
            guard let directory = opendir(path) else { return 0 }
            defer { closedir(directory) }
            var count = 0
            while let entry = readdir(directory) {
                if entry.pointee.d_name.0 != UInt8(ascii: ".") { count += 1 }
            }
            return count
        }
    }
}
