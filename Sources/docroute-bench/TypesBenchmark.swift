import ArgumentParser
import DocRouteHandlers
import DocRouteTypes
import Foundation

extension DocRouteBench {
    struct Types: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Typing by name and by content, one core.")
        @Flag var quick = false

        func run() throws {
            let engine = TypeEngine(catalog: .system, mimeDatabase: .loadSystemOrBuiltin())
            let names = ["report.pdf", "photo.JPG", "notes.md", "backup.tar.gz", "1abc.pdb.gz", "data.json", "song.mp3",
                         "unknown.zzqx", "index.html", "script.sh", "archive.zip", "slides.pptx", "README", "image.png", "movie.mov", "sheet.xlsx"]
            let lookups = quick ? 200_000 : 4_000_000
            let byName = median(5) {
                var sink = 0
                let elapsed = seconds {
                    for index in 0..<lookups {
                        sink &+= engine.classify(filename: names[index & 15]).contentType.utf8.count
                    }
                }
                precondition(sink > 0)
                return Double(lookups) / elapsed
            }
            report("types by name (classify(filename:))", byName, unit: "lookups/s", target: ">= 1,000,000")

            var heads: [[UInt8]] = []
            heads.append([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 4088))
            heads.append(Array("%PDF-1.7\n".utf8) + Array(repeating: 0x41, count: 4087))
            heads.append([0x1F, 0x8B, 0x08, 0x00] + Array(repeating: 7, count: 4092))
            heads.append(Array(repeating: UInt8(ascii: "a"), count: 4096))
            heads.append(Array("<?xml version=\"1.0\"?><root/>".utf8) + Array(repeating: 0x20, count: 4068))
            heads.append((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            heads.append(Array("PK\u{3}\u{4}".utf8) + Array(repeating: 0, count: 4092))
            heads.append(Array("#!/bin/sh\necho hi\n".utf8) + Array(repeating: 0x20, count: 4078))
            let contents = quick ? 20_000 : 400_000
            let byContent = median(5) {
                var sink = 0
                let elapsed = seconds {
                    for index in 0..<contents {
                        sink &+= engine.classify(filename: nil, head: heads[index & 7]).contentType.utf8.count
                    }
                }
                precondition(sink > 0)
                return Double(contents) / elapsed
            }
            report("types by content (4 KiB head already read)", byContent, unit: "typings/s", target: ">= 100,000")
        }
    }

    struct Selection: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Handler choice with 200 handlers; reload of 200 manifests.")
        @Flag var quick = false

        func run() throws {
            let directory = NSTemporaryDirectory() + "docroute-bench-handlers-\(getpid())"
            try? FileManager.default.removeItem(atPath: directory)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let catalog = TypeCatalog.system.declarations.filter { !$0.filenameExtensions.isEmpty }.map(\.identifier)
            let ranks = ["Owner", "Default", "Alternate"]
            let roles = ["Editor", "Viewer", "Shell"]
            for index in 0..<200 {
                let types = (0..<5).map { catalog[(index * 7 + $0 * 13) % catalog.count] } + (index % 10 == 0 ? ["public.data"] : [])
                let plist: [String: Any] = [
                    "CFBundleIdentifier": "org.bench.handler\(index)",
                    "CFBundleDocumentTypes": [["CFBundleTypeName": "docs", "LSHandlerRank": ranks[index % 3], "CFBundleTypeRole": roles[index % 3], "LSItemContentTypes": types]],
                    "CFBundleURLTypes": [["CFBundleURLSchemes": ["bench\(index)"]]],
                    "UTExportedTypeDeclarations": [["UTTypeIdentifier": "org.bench.type\(index)", "UTTypeConformsTo": ["public.data"], "UTTypeTagSpecification": ["public.filename-extension": "bench\(index)"]]],
                ]
                let data = try PropertyListSerialization.data(fromPropertyList: plist, format: index % 2 == 0 ? .xml : .binary, options: 0)
                try data.write(to: URL(fileURLWithPath: "\(directory)/h\(index).plist"))
            }
            let logger = Logger.quiet
            var registry = HandlerDirectory(path: directory).load(logger: logger)
            let reload = median(7) {
                seconds { registry = HandlerDirectory(path: directory).load(logger: logger) }
            } * 1000
            precondition(registry.handlers.count == 200)
            report("reload of 200 manifests (XML and binary)", reload, unit: "ms", target: "< 100 ms")

            let selector = HandlerSelector(registry: registry)
            let types = ["public.png", "com.adobe.pdf", "public.plain-text", "public.jpeg", "org.bench.type17", "public.mpeg-4", "public.zip-archive", "public.html"]
            let rounds = quick ? 100_000 : 2_000_000
            let rate = median(5) {
                var sink = 0
                let elapsed = seconds {
                    for index in 0..<rounds {
                        sink &+= selector.chooseHandler(contentType: types[index & 7])?.bundleIdentifier.utf8.count ?? 0
                    }
                }
                precondition(sink > 0)
                return Double(rounds) / elapsed
            }
            report("handler choice, 200 handlers registered", rate, unit: "choices/s", target: ">= 500,000")
        }
    }
}

import Logging

extension Logger {
    static let quiet = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
}
