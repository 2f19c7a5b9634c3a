/// A file descriptor that systemd passed to the process by socket activation.
package struct ListenedDescriptor: Hashable, Sendable, CustomStringConvertible {
    /// The descriptor number (3, 4, … in the order of the socket units' `Listen*=` lines).
    package let fileDescriptor: CInt
    /// The socket unit's `FileDescriptorName=`, or `"unknown"` when systemd gave none.
    package let name: String

    /// `name=fd`.
    package var description: String { "\(name)=\(fileDescriptor)" }
}
