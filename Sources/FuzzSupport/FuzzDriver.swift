/// libFuzzer's own driver (`FuzzerDriver.cpp`), exported by the fuzzer runtime that
/// `-sanitize=fuzzer` links.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// Runs libFuzzer on `testOneInput` with the program's command line.
///
/// SwiftPM links a tools-version 5.5+ executable with `main` aliased to `<Module>_main` (so tests can
/// link executables), and `-parse-as-library` emits no such symbol; each fuzz target therefore
/// defines `<Module>_main` itself and hands over here, instead of relying on libFuzzer's `main`.
public func runFuzzer(
    argc: CInt, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
    testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv, testOneInput)
}
