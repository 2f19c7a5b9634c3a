/// A file descriptor that systemd passed to the process by socket activation.
public struct ListenedDescriptor: Hashable, Sendable, CustomStringConvertible {
    /// The descriptor number (3, 4, … in the order of the socket units' `Listen*=` lines).
    public let fileDescriptor: CInt
    /// The socket unit's `FileDescriptorName=`, or `"unknown"` when systemd gave none.
    public let name: String

    /// A descriptor and its name.
    public init(fileDescriptor: CInt, name: String) {
        self.fileDescriptor = fileDescriptor
        self.name = name
    }

    /// `name=fd`.
    public var description: String { "\(name)=\(fileDescriptor)" }
}
