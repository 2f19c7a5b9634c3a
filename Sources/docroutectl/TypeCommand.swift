import ArgumentParser
import DocRouteIntake
import DocRoutePlatform
import DocRouteTypes
import Foundation

struct TypeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "type",
        abstract: "Show each file's Uniform Type Identifier, what it conforms to, and how it was decided.",
        discussion: "The MIME type is what freedesktop detection finds (name globs, then magic where the name allows several types or none); the UTI is derived from it. A folder is typed by its name (a package type, or public.folder). Files are opened without blocking (a FIFO never hangs the command). A path that cannot be typed gets an error and the exit status is 1; the others are still typed. With --decode, show the tags inside a dyn. identifier instead.")

    @OptionGroup var options: HandlerOptions

    @Flag(help: "Print a JSON array, one object per path.")
    var json = false

    @Option(help: "Decode a dyn. identifier and show its tags.")
    var decode: String?

    @Argument(help: "Files to type.")
    var paths: [String] = []

    func run() throws {
        if let decode {
            guard let dynamic = DynamicTypeIdentifier(decoding: decode) else {
                throw ValidationError("'\(decode)' is not a dynamic type identifier (dyn.a… in Apple's encoding)")
            }
            var tags: [String: Any] = [:]
            for (tagClass, values) in dynamic.tags { tags[tagClass.rawValue] = values }
            if json {
                try JSONOutput.print(["identifier": decode, "payload": dynamic.payload, "conformsTo": dynamic.conformsTo, "tags": tags])
            } else {
                print("\(decode)\n  payload     \(dynamic.payload)\n  conforms to \(dynamic.conformsTo.joined(separator: ", "))")
                for (tagClass, values) in dynamic.tags.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                    print("  \(tagClass.rawValue)  \(values.joined(separator: ", "))")
                }
            }
            return
        }
        guard !paths.isEmpty else { throw ValidationError("give at least one path (or --decode dyn.…)") }
        let registry = try options.registry(optional: true)
        let mime = MIMEDatabase.loadSystemOrBuiltin()
        let engine = TypeEngine(catalog: registry.catalog, mimeDatabase: mime)
        var results: [[String: Any]] = []
        var failed = false
        for path in paths {
            var entry: [String: Any] = ["path": path]
            switch FileTyping.type(path: path, engine: engine) {
            case .success(let classification):
                entry["contentType"] = classification.contentType
                entry["conformsTo"] = classification.conformsTo
                entry["mimeType"] = JSONOutput.orNull(classification.mimeType)
                entry["innerContentType"] = JSONOutput.orNull(classification.innerContentType)
                entry["decidedBy"] = classification.decidedBy.rawValue
            case .failure(let message):
                entry["error"] = message.description
                failed = true
            }
            results.append(entry)
        }
        if json {
            try JSONOutput.print(results)
        } else {
            var rows = [["PATH", "TYPE", "MIME", "DECIDED BY", "CONFORMS TO"]]
            for entry in results {
                if let error = entry["error"] as? String {
                    rows.append([entry["path"] as! String, "error: \(error)", "", "", ""])
                    continue
                }
                var type = entry["contentType"] as! String
                if let inner = entry["innerContentType"] as? String { type += " (holding \(inner))" }
                rows.append([entry["path"] as! String, type, (entry["mimeType"] as? String) ?? "-",
                             entry["decidedBy"] as! String, (entry["conformsTo"] as! [String]).prefix(4).joined(separator: ", ")])
            }
            TablePrinter.print(rows)
            print("\nMIME database: \(mime.source)")
        }
        if failed { throw ExitCode(1) }
    }
}

/// Types one path from the command line the way intake does: no link games, no blocking.
enum FileTyping {
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static func type(path: String, engine: TypeEngine) -> Result<TypeClassification, Failure> {
        let directory = open((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return .failure(Failure("cannot open its folder: \(String(cString: strerror(errno)))")) }
        defer { close(directory) }
        let name = Array((path as NSString).lastPathComponent.utf8)
        // The command follows a link the user names (it is their own file); intake never does.
        var info = stat()
        if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK {
            guard let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: path) else { return .failure(Failure("a dangling symbolic link")) }
            let target = resolved.hasPrefix("/") ? resolved : ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent(resolved)
            return type(path: target, engine: engine).map { $0 }
        }
        switch IntakeFile.open(name: name, in: directory, maxSize: .max, headLength: max(4096, engine.mimeDatabase.maximumHeadLength)) {
        case .success(let file):
            defer { close(file.descriptor) }
            return .success(engine.classify(filename: (path as NSString).lastPathComponent, head: file.head))
        case .failure(.directory):
            // A folder is typed by its name: a package (`Report.rtfd`) or public.folder.
            return .success(engine.classify(directoryNamed: (path as NSString).lastPathComponent))
        case .failure(.vanished):
            return .failure(Failure("no such file"))
        case .failure(let refusal):
            return .failure(Failure("\(refusal)"))
        }
    }
}
