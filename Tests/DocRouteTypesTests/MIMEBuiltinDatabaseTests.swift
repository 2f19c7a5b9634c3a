import Testing

@testable import DocRouteTypes

@Suite("MIME built-in fallback table")
struct MIMEBuiltinDatabaseTests {
    let database = MIMEDatabase.builtin

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func saysWhereItsDataCameFrom() {
        #expect(database.source == "built-in fallback")
        #expect(database.directories.isEmpty)
        #expect(database.issues.isEmpty)
    }

    @Test(arguments: [
        ("%PDF-1.7\n", "application/pdf"),
        ("\u{89}PNG", "image/png"),
        ("GIF89a", "image/gif"),
        ("RIFF\0\0\0\0WEBPVP8 ", "image/webp"),
        ("RIFF\0\0\0\0WAVEfmt ", "audio/x-wav"),
        ("{\\rtf1\\ansi", "application/rtf"),
        ("<?xml version=\"1.0\"?><a/>", "application/xml"),
        ("\n\n<!DOCTYPE html><html>", "text/html"),
        ("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\">", "image/svg+xml"),
        ("#!/bin/sh\necho hi\n", "application/x-shellscript"),
        ("#!/usr/bin/env python3\nprint(1)\n", "text/x-python3"),
        ("BEGIN:VCALENDAR\r\n", "text/calendar"),
        ("SQLite format 3\0", "application/vnd.sqlite3"),
        ("!<arch>\ndebian-binary", "application/vnd.debian.binary-package"),
        ("plain old text\n", "text/plain"),
    ])
    func sniffsCommonContent(text: String, expected: String) {
        // "\u{89}" in a Swift string is two UTF-8 bytes; PNG needs the single byte 0x89.
        var head = Self.bytes(text)
        if expected == "image/png" { head = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] }
        #expect(database.detect(filename: nil, head: head).mimeType == expected)
    }

    @Test func binarySignatures() {
        #expect(database.detect(filename: nil, head: [0xFF, 0xD8, 0xFF, 0xE0]).mimeType == "image/jpeg")
        #expect(database.detect(filename: nil, head: [0x1F, 0x8B, 0x08, 0x00]).mimeType == "application/gzip")
        #expect(
            database.detect(filename: nil, head: [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]).mimeType == "application/x-xz"
        )
        #expect(database.detect(filename: nil, head: Self.bytes("BZh91AY")).mimeType == "application/x-bzip")
        #expect(database.detect(filename: nil, head: [0x28, 0xB5, 0x2F, 0xFD]).mimeType == "application/zstd")
        #expect(database.detect(filename: nil, head: [0x50, 0x4B, 0x03, 0x04, 0x14]).mimeType == "application/zip")
        #expect(
            database.detect(filename: nil, head: [0x7F, 0x45, 0x4C, 0x46, 0x02]).mimeType == "application/x-executable"
        )
        var tar = [UInt8](repeating: 0, count: 512)
        tar.replaceSubrange(257..<263, with: Self.bytes("ustar\0"))
        #expect(database.detect(filename: nil, head: tar).mimeType == "application/x-tar")
        var odt = [UInt8](repeating: 0, count: 30) + Self.bytes("mimetypeapplication/vnd.oasis.opendocument.text")
        odt.replaceSubrange(0..<4, with: [0x50, 0x4B, 0x03, 0x04])
        #expect(database.detect(filename: nil, head: odt).mimeType == "application/vnd.oasis.opendocument.text")
        #expect(database.detect(filename: nil, head: [0x00, 0x01, 0x02]).mimeType == "application/octet-stream")
    }

    @Test func namesAndHierarchy() {
        #expect(database.detect(filename: "a.tar.gz", head: []).mimeType == "application/x-compressed-tar")
        #expect(
            database.detect(filename: "Book.XLSX", head: []).mimeType
                == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
        )
        #expect(database.detect(filename: "index.html", head: []).mimeType == "text/html")
        #expect(database.detect(filename: "Makefile", head: []).mimeType == "text/x-makefile")
        #expect(database.detect(filename: "tool.py", head: []).mimeType == "text/x-python")
        #expect(database.detect(filename: "main.C", head: []).mimeType == "text/x-c++src")
        #expect(database.canonical("text/xml") == "application/xml")
        #expect(database.isSubclass("application/x-compressed-tar", of: "application/gzip"))
        #expect(
            database.isSubclass(
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                of: "application/zip"
            )
        )
        #expect(database.isSubclass("application/x-shellscript", of: "text/plain"))
        #expect(
            database.detect(filename: "letter.doc", head: [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]).mimeType
                == "application/msword"
        )
    }
}
