/// Where in docroute's own source an error was raised: for a developer reading a log, never for
/// matching on.
public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
    /// The `#fileID` of the raising code, e.g. `DocRouteCore/SandboxWriter.swift`.
    public var file: String
    /// The line of the raising code.
    public var line: Int

    /// A location; normally left to default to the caller's `#fileID` and `#line`.
    public init(file: String = #fileID, line: Int = #line) {
        self.file = file
        self.line = line
    }

    /// `file:line`.
    public var description: String { "\(file):\(line)" }
}
