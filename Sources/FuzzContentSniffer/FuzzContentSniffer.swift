import DocRouteTypes
import FuzzSupport

/// Built once: loading the freedesktop database is the slow part, and it does not change.
let engine = TypeEngine(catalog: .system, mimeDatabase: .loadSystemOrBuiltin())
let builtinEngine = TypeEngine(catalog: .system, mimeDatabase: .builtin)

/// libFuzzer entry point: any bytes as the head of a file, typed by content alone and under a name
/// the content may contradict. Typing must never trap and always answer with a type and its ancestors.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContentSniffer(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let head = UnsafeRawBufferPointer(start: UnsafeRawPointer(start), count: start == nil ? 0 : count)
    for typing in [engine, builtinEngine] {
        for name in [nil, "report.pdf", "archive.tar.gz", "noextension"] as [String?] {
            let classification = typing.classify(filename: name, head: head)
            precondition(!classification.contentType.isEmpty, "typed as the empty identifier")
        }
        _ = typing.classify(filename: nil, head: head, mimeHint: "application/octet-stream")
        let detection = typing.mimeDatabase.detect(filename: nil, head: head, options: .contentOnly)
        precondition(!detection.mimeType.isEmpty, "detected the empty MIME type")
    }
    _ = MIMETextSniffer.looksLikeText(head)
    return 0
}

/// The program's entry point (see ``runFuzzer(argc:argv:testOneInput:)``).
@_cdecl("FuzzContentSniffer_main")
public func fuzzContentSnifferMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runFuzzer(argc: argc, argv: argv, testOneInput: fuzzContentSniffer)
}
