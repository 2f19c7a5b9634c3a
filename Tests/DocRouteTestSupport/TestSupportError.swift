/// A failure of a test helper (not of the code under test), with what went wrong.
public struct TestSupportError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
