import SystemPackage

extension FilePath.Component {
    /// The name made of these raw bytes (no terminating NUL; they need not be UTF-8); nil for an
    /// empty name, or one holding a `/` or a NUL.
    package init?(platformBytes bytes: [UInt8]) {
        guard !bytes.isEmpty, !bytes.contains(0) else { return nil }
        let terminated = bytes.map { CChar(bitPattern: $0) } + [0]
        guard let component = terminated.withUnsafeBufferPointer({ FilePath.Component(platformString: $0.baseAddress!) }) else { return nil }
        self = component
    }
}
