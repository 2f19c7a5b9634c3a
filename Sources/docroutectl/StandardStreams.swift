import DocRoutePlatform

/// Unbuffered writes to standard output and standard error.
///
/// Each call is whole lines in one `write(2)` loop, so a line never interleaves with the output
/// of a child process, and a reader of a pipe sees it at once (print() buffers when stdout is a pipe).
enum StandardStreams {
    /// Writes bytes to standard output as they are.
    static func output(_ bytes: [UInt8]) {
        // A closed stdout (a reader that went away) leaves nothing to tell.
        try? StandardStream.output.write(bytes)
    }

    /// Writes a line of text (a newline is added) to standard output.
    static func output(line: String) {
        output(Array((line + "\n").utf8))
    }

    /// Writes a line of text (a newline is added) to standard error, prefixed with `docroutectl: `.
    static func error(_ line: String) {
        try? StandardStream.error.write(Array(("docroutectl: " + line + "\n").utf8))
    }
}
