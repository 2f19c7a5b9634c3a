import DocRouteHandlers
import DocRouteTypes
import Foundation
import FuzzSupport

/// libFuzzer entry point: any bytes as a handler's Info.plist. The reader must answer with a
/// manifest or a ManifestError, never trap; an accepted manifest must survive being read again.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzManifestReader(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    var issues: [TypeCatalogIssue] = []
    let first = ManifestReader.read(data: data, file: "Fuzz.app/Info.plist", typeIssues: &issues)
    var againIssues: [TypeCatalogIssue] = []
    let second = ManifestReader.read(data: data, file: "Fuzz.app/Info.plist", typeIssues: &againIssues)
    switch (first, second) {
    case (.success(let a), .success(let b)):
        // Pure: the same bytes give the same manifest.
        precondition(a == b, "the same plist read twice gave two manifests")
        precondition(issues == againIssues, "the same plist read twice gave two lists of type issues")
    case (.failure(let a), .failure(let b)):
        precondition(a == b, "the same plist failed twice with two errors: \(a) / \(b)")
    default:
        preconditionFailure("the same plist was accepted once and refused once")
    }
    return 0
}

/// The program's entry point (see ``runFuzzer(argc:argv:testOneInput:)``).
@_cdecl("FuzzManifestReader_main")
public func fuzzManifestReaderMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runFuzzer(argc: argc, argv: argv, testOneInput: fuzzManifestReader)
}
