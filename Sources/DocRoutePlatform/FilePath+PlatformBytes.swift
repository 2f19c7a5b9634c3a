import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension FilePath.Component {
    /// The name made of these raw bytes (no terminating NUL; they need not be UTF-8); nil for an
    /// empty name, or one holding a `/` or a NUL.
    package init?(platformBytes bytes: [UInt8]) {
        guard !bytes.isEmpty, !bytes.contains(0) else { return nil }
        let terminated = bytes.map { CChar(bitPattern: $0) } + [0]
        guard let component = terminated.withUnsafeBufferPointer({ FilePath.Component(platformString: $0.baseAddress!) }) else { return nil }
        self = component
    }

    /// Calls `body` with the name's raw bytes (no terminating NUL; they need not be UTF-8).
    package func withPlatformBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withPlatformString { pointer in try body(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))) }
    }
}

extension FilePath {
    /// The path made of these raw bytes (no terminating NUL; they need not be UTF-8); nil when
    /// they hold a NUL.
    package init?(platformBytes bytes: [UInt8]) {
        guard !bytes.contains(0) else { return nil }
        let terminated = bytes.map { CChar(bitPattern: $0) } + [0]
        self = terminated.withUnsafeBufferPointer { FilePath(platformString: $0.baseAddress!) }
    }

    /// The path's raw bytes, without the terminating NUL.
    package var platformBytes: [UInt8] {
        withPlatformBytes { Array($0) }
    }

    /// Calls `body` with the path's raw bytes (no terminating NUL), without copying them.
    package func withPlatformBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withPlatformString { pointer in try body(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))) }
    }
}
