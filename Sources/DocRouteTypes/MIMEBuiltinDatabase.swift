/// The small table used when no shared-mime-info database is installed.
///
/// It covers the common document, image, archive, audio/video, text and script types with the
/// names, priorities and parents that shared-mime-info itself uses, so results do not change
/// type names when a real database appears. It is deliberately not exhaustive.
enum MIMEBuiltinDatabase {
    static let source = "built-in fallback"

    static func makeLayer() -> MIMEDatabaseLayer {
        MIMEDatabaseLayer(
            directory: source,
            globs: globs.map { entry in
                MIMEDatabaseLayer.GlobRule(
                    weight: entry.weight,
                    type: entry.type,
                    pattern: entry.pattern,
                    caseSensitive: entry.caseSensitive,
                    deletesEarlierGlobs: false
                )
            },
            magicSections: magic,
            subclasses: subclasses.map { MIMEDatabaseLayer.TypePair(first: $0.0, second: $0.1) },
            aliases: aliases.map { MIMEDatabaseLayer.TypePair(first: $0.0, second: $0.1) }
        )
    }

    private static func glob(
        _ type: String,
        _ patterns: String...,
        weight: Int = 50,
        caseSensitive: Bool = false
    ) -> [(type: String, pattern: String, weight: Int, caseSensitive: Bool)] {
        patterns.map { (type, $0, weight, caseSensitive) }
    }

    private static let globs: [(type: String, pattern: String, weight: Int, caseSensitive: Bool)] =
        [
            glob("text/html", "*.html", "*.htm", weight: 80),
            glob("text/x-python", "*.py", weight: 60),
            glob("text/x-python3", "*.py", "*.py3"),
            glob("application/pdf", "*.pdf"),
            glob("image/png", "*.png"),
            glob("image/jpeg", "*.jpg", "*.jpeg", "*.jpe"),
            glob("image/gif", "*.gif"),
            glob("image/webp", "*.webp"),
            glob("image/tiff", "*.tif", "*.tiff"),
            glob("image/bmp", "*.bmp"),
            glob("image/svg+xml", "*.svg"),
            glob("application/zip", "*.zip"),
            glob("application/vnd.oasis.opendocument.text", "*.odt"),
            glob("application/epub+zip", "*.epub"),
            glob("application/vnd.openxmlformats-officedocument.wordprocessingml.document", "*.docx"),
            glob("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "*.xlsx"),
            glob("application/vnd.openxmlformats-officedocument.presentationml.presentation", "*.pptx"),
            glob("application/msword", "*.doc"),
            glob("application/vnd.ms-excel", "*.xls"),
            glob("application/gzip", "*.gz"),
            glob("application/x-compressed-tar", "*.tar.gz", "*.tgz"),
            glob("application/x-xz", "*.xz"),
            glob("application/x-xz-compressed-tar", "*.tar.xz", "*.txz"),
            glob("application/x-bzip", "*.bz2", "*.bz"),
            glob("application/x-bzip-compressed-tar", "*.tar.bz2", "*.tbz2", "*.tb2"),
            glob("application/zstd", "*.zst"),
            glob("application/x-zstd-compressed-tar", "*.tar.zst", "*.tzst"),
            glob("application/x-7z-compressed", "*.7z"),
            glob("application/x-tar", "*.tar"),
            glob("application/xml", "*.xml"),
            glob("application/xhtml+xml", "*.xhtml"),
            glob("application/json", "*.json"),
            glob("application/javascript", "*.js", "*.mjs"),
            glob("text/css", "*.css"),
            glob("application/x-shellscript", "*.sh"),
            glob("text/plain", "*.txt", "*.asc"),
            glob("text/markdown", "*.md", "*.markdown"),
            glob("text/csv", "*.csv"),
            glob("text/calendar", "*.ics"),
            glob("text/vcard", "*.vcf", "*.vcard"),
            glob("message/rfc822", "*.eml"),
            glob("text/x-csrc", "*.c"),
            glob("text/x-c++src", "*.C", caseSensitive: true),
            glob("text/x-c++src", "*.cpp", "*.cc", "*.cxx"),
            glob("text/x-makefile", "makefile", "gnumakefile"),
            glob("application/rtf", "*.rtf"),
            glob("application/postscript", "*.ps"),
            glob("audio/mpeg", "*.mp3"),
            glob("audio/flac", "*.flac"),
            glob("audio/x-wav", "*.wav"),
            glob("audio/ogg", "*.ogg", "*.oga"),
            glob("video/mp4", "*.mp4", "*.m4v"),
            glob("video/webm", "*.webm"),
            glob("application/vnd.sqlite3", "*.sqlite3", "*.sqlite"),
            glob("application/vnd.debian.binary-package", "*.deb"),
            glob("font/ttf", "*.ttf"),
            glob("font/woff2", "*.woff2"),
        ].flatMap { $0 }

    private static func rule(
        _ offset: Int,
        _ value: [UInt8],
        range: Int = 1,
        indent: Int = 0
    ) -> MIMEDatabaseLayer.MagicRule {
        MIMEDatabaseLayer.MagicRule(indent: indent, offset: offset, rangeLength: range, value: value, mask: nil)
    }

    private static func rule(
        _ offset: Int,
        _ text: String,
        range: Int = 1,
        indent: Int = 0
    ) -> MIMEDatabaseLayer.MagicRule {
        rule(offset, Array(text.utf8), range: range, indent: indent)
    }

    private static func section(
        _ priority: Int,
        _ type: String,
        _ rules: MIMEDatabaseLayer.MagicRule...
    ) -> MIMEDatabaseLayer.MagicSection {
        MIMEDatabaseLayer.MagicSection(priority: priority, type: type, rules: rules, deletesEarlierMagic: false)
    }

    private static let zipHeader: [UInt8] = [0x50, 0x4B, 0x03, 0x04]

    private static let magic: [MIMEDatabaseLayer.MagicSection] = [
        section(80, "image/svg+xml", rule(0, "<svg", range: 257), rule(0, "<!DOCTYPE svg", range: 257)),
        section(70, "application/epub+zip", rule(0, zipHeader), rule(30, "mimetypeapplication/epub+zip", indent: 1)),
        section(
            70,
            "application/vnd.oasis.opendocument.text",
            rule(0, zipHeader),
            rule(30, "mimetypeapplication/vnd.oasis.opendocument.text", indent: 1)
        ),
        section(60, "application/x-7z-compressed", rule(0, [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C])),
        section(60, "application/x-tar", rule(257, "ustar\0"), rule(257, "ustar  \0")),
        section(60, "application/x-xz", rule(0, [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00])),
        section(60, "application/zip", rule(0, zipHeader)),
        section(60, "application/zstd", rule(0, [0x28, 0xB5, 0x2F, 0xFD])),
        section(
            60,
            "text/x-python3",
            rule(0, "#!/usr/bin/python3"),
            rule(0, "#!/usr/bin/env python3"),
            rule(0, "#! /usr/bin/env python3")
        ),
        section(50, "application/gzip", rule(0, [0x1F, 0x8B])),
        section(50, "application/pdf", rule(0, "%PDF-", range: 1025)),
        section(50, "application/postscript", rule(0, "%!")),
        section(50, "application/rtf", rule(0, "{\\rtf")),
        section(50, "application/vnd.debian.binary-package", rule(0, "!<arch>\ndebian")),
        section(50, "application/vnd.sqlite3", rule(0, "SQLite format 3\0")),
        section(50, "application/x-bzip", rule(0, "BZh")),
        section(50, "application/x-ole-storage", rule(0, [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1])),
        section(
            50,
            "application/x-shellscript",
            rule(0, "#!/bin/sh"),
            rule(0, "#! /bin/sh"),
            rule(0, "#!/bin/bash"),
            rule(0, "#! /bin/bash"),
            rule(0, "#!/bin/dash"),
            rule(0, "#!/usr/bin/env sh"),
            rule(0, "#!/usr/bin/env bash")
        ),
        section(50, "audio/flac", rule(0, "fLaC")),
        section(50, "audio/mpeg", rule(0, "ID3")),
        section(50, "audio/ogg", rule(0, "OggS")),
        section(50, "audio/x-wav", rule(0, "RIFF"), rule(8, "WAVE", indent: 1)),
        section(50, "font/woff2", rule(0, "wOF2")),
        section(50, "image/bmp", rule(0, "BM"), rule(6, [0, 0, 0, 0], indent: 1)),
        section(50, "image/gif", rule(0, "GIF87a"), rule(0, "GIF89a")),
        section(50, "image/jpeg", rule(0, [0xFF, 0xD8, 0xFF])),
        section(50, "image/png", rule(0, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])),
        section(50, "image/tiff", rule(0, "MM\0*"), rule(0, "II*\0")),
        section(50, "image/webp", rule(0, "RIFF"), rule(8, "WEBP", indent: 1)),
        section(50, "text/calendar", rule(0, "BEGIN:VCALENDAR")),
        section(50, "text/vcard", rule(0, "BEGIN:VCARD")),
        section(50, "video/mp4", rule(4, "ftypisom"), rule(4, "ftypmp41"), rule(4, "ftypmp42")),
        section(50, "video/webm", rule(0, [0x1A, 0x45, 0xDF, 0xA3]), rule(5, "webm", range: 60, indent: 1)),
        section(
            40,
            "text/html",
            rule(0, "<!DOCTYPE HTML", range: 257),
            rule(0, "<!DOCTYPE html", range: 257),
            rule(0, "<!doctype html", range: 257),
            rule(0, "<html", range: 257),
            rule(0, "<HTML", range: 257)
        ),
        section(40, "application/x-executable", rule(0, [0x7F, 0x45, 0x4C, 0x46])),
        section(40, "application/xml", rule(0, "<?xml")),
    ]

    private static let subclasses: [(String, String)] = [
        ("application/x-compressed-tar", "application/gzip"),
        ("application/x-xz-compressed-tar", "application/x-xz"),
        ("application/x-bzip-compressed-tar", "application/x-bzip"),
        ("application/x-zstd-compressed-tar", "application/zstd"),
        ("application/msword", "application/x-ole-storage"),
        ("application/vnd.ms-excel", "application/x-ole-storage"),
        ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", "application/zip"),
        ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "application/zip"),
        ("application/vnd.openxmlformats-officedocument.presentationml.presentation", "application/zip"),
        ("application/vnd.oasis.opendocument.text", "application/zip"),
        ("application/epub+zip", "application/zip"),
        ("image/svg+xml", "application/xml"),
        ("application/xhtml+xml", "application/xml"),
        ("application/xml", "text/plain"),
        ("application/json", "application/javascript"),
        ("application/javascript", "text/plain"),
        ("application/x-shellscript", "application/x-executable"),
        ("application/x-shellscript", "text/plain"),
        ("text/x-python", "application/x-executable"),
        ("text/x-python3", "text/x-python"),
        ("text/x-c++src", "text/x-csrc"),
        ("application/postscript", "text/plain"),
        ("application/rtf", "text/plain"),
        ("message/rfc822", "text/plain"),
    ]

    private static let aliases: [(String, String)] = [
        ("text/xml", "application/xml"),
        ("application/x-gzip", "application/gzip"),
        ("application/x-pdf", "application/pdf"),
        ("application/x-bzip2", "application/x-bzip"),
        ("application/x-zip-compressed", "application/zip"),
        ("text/x-sh", "application/x-shellscript"),
        ("text/javascript", "application/javascript"),
        ("application/x-javascript", "application/javascript"),
        ("image/pjpeg", "image/jpeg"),
        ("audio/x-flac", "audio/flac"),
        ("audio/wav", "audio/x-wav"),
        ("audio/vnd.wave", "audio/x-wav"),
        ("application/x-sqlite3", "application/vnd.sqlite3"),
    ]
}
