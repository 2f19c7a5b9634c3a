// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "docroute",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "docrouted", targets: ["docrouted"]),
        .executable(name: "docroutectl", targets: ["docroutectl"]),
        .library(name: "DocRouteTypes", targets: ["DocRouteTypes"]),
    ],
    dependencies: [
        // DocRouteProtocol, DocRouteErrors and DocRouteClient: the client package, which handler
        // authors depend on without the daemon's dependencies.
        .package(path: "Clients/Swift"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // memchr and memcmp for the pure-logic targets, which import neither the C library nor Platform.
        .target(name: "CDocRouteBytes"),
        // Pure logic: the UTI model, catalog, tags, dyn identifiers and content sniffing.
        .target(
            name: "DocRouteTypes",
            dependencies: [
                .product(name: "DocRouteErrors", package: "Swift"), "CDocRouteBytes",
                // The MIME database files read without the C library.
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            // The JSON is the source of SystemTypeTable.swift (scripts/generate-type-table.py), which
            // embeds it: an installed binary then needs no resource bundle beside it.
            exclude: ["Resources"]
        ),
        // Pure logic: manifests, the registry and handler selection.
        .target(
            name: "DocRouteHandlers",
            dependencies: [.product(name: "DocRouteErrors", package: "Swift"), "DocRouteTypes", .product(name: "Logging", package: "swift-log")]
        ),
        // Pure logic: a streaming RFC 5322 + MIME parser that hands attachments to a sink; Maildir++ names.
        .target(name: "DocRouteMail", dependencies: [.product(name: "DocRouteErrors", package: "Swift"), "CDocRouteBytes"]),
        // C shim for Linux calls Glibc does not surface cleanly (ucred, renameat2, copy_file_range).
        .target(name: "CDocRouteShim"),
        .systemLibrary(
            name: "CDocRouteSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // libsystemd binding: sd_notify, sd_listen_fds_with_names, a journald LogHandler.
        .target(
            name: "DocRouteSystemd",
            dependencies: [
                .product(name: "DocRouteErrors", package: "Swift"), "CDocRouteSystemd", "DocRoutePlatform",
                .product(name: "Logging", package: "swift-log"),
                // Errno, as the cause of a failed libsystemd call.
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The daemon, one target per job in the order a file flows through it (docs/ARCHITECTURE.md).
        // Each imports only targets above it: Platform → Configuration → Maildir → Intake → Ledger →
        // Fleet → Delivery → Server → Operations → Daemon.
        // System calls, descriptors, folders, users: the only target with the C shim.
        .target(
            name: "DocRoutePlatform",
            dependencies: [
                .product(name: "DocRouteErrors", package: "Swift"),
                "CDocRouteShim",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // docroute.toml read and checked; the MIME database chosen.
        .target(
            name: "DocRouteConfiguration",
            dependencies: [
                .product(name: "DocRouteErrors", package: "Swift"),
                "DocRoutePlatform", "DocRouteTypes", "DocRouteHandlers", .product(name: "DocRouteProtocol", package: "Swift"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // A Maildir's messages read into attachment files (the parser is DocRouteMail).
        .target(
            name: "DocRouteMaildir",
            dependencies: [
                "DocRoutePlatform", "DocRouteConfiguration", "DocRouteMail", .product(name: "DocRouteProtocol", package: "Swift"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // inotify, the arrival queue, typing and handler selection: files in, delivery requests out.
        .target(
            name: "DocRouteIntake",
            dependencies: [
                .product(name: "DocRouteErrors", package: "Swift"),
                "DocRoutePlatform", "DocRouteConfiguration", "DocRouteMaildir",
                "DocRouteTypes", "DocRouteHandlers", .product(name: "DocRouteProtocol", package: "Swift"), "DocRouteMail",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The delivery ledger (SQLite through GRDB): what was delivered, what is owed, acknowledgements.
        .target(
            name: "DocRouteLedger",
            dependencies: [
                "DocRoutePlatform", .product(name: "DocRouteProtocol", package: "Swift"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // A fleet of hosts sharing one PostgreSQL database: the schema, host registration, heartbeats.
        .target(
            name: "DocRouteFleet",
            dependencies: [
                .product(name: "DocRouteErrors", package: "Swift"),
                "DocRoutePlatform", "DocRouteConfiguration", "DocRouteHandlers",
                // `status`'s view of the fleet, as the protocol's JSON.
                .product(name: "DocRouteProtocol", package: "Swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // The descriptors intake's bytes are read from and a claimed copy's are written to.
                .product(name: "SystemPackage", package: "swift-system"),
                // The registry's digest each host publishes.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Copies into sandboxes in batches, durable before they count; quarantine; reclamation.
        .target(
            name: "DocRouteDelivery",
            dependencies: [
                "DocRoutePlatform", "DocRouteConfiguration", "DocRouteIntake", "DocRouteLedger",
                // With [fleet]: inbox files committed to PostgreSQL, deliveries claimed from it.
                "DocRouteFleet",
                "DocRouteTypes", "DocRouteHandlers", .product(name: "DocRouteProtocol", package: "Swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The Unix sockets, requests, telling handlers (dispatch) and launching them.
        .target(
            name: "DocRouteServer",
            dependencies: [
                .product(name: "DocRouteErrors", package: "Swift"),
                "DocRoutePlatform", "DocRouteConfiguration", "DocRouteLedger",
                "DocRouteHandlers", .product(name: "DocRouteProtocol", package: "Swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // What the daemon is doing: status, metrics, progress.
        .target(
            name: "DocRouteOperations",
            dependencies: [
                "DocRoutePlatform", "DocRouteConfiguration", "DocRouteIntake", "DocRouteLedger",
                "DocRouteServer", .product(name: "DocRouteProtocol", package: "Swift"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // Wires the parts together: start, reload, shutdown, and the requests that need them all.
        .target(
            name: "DocRouteDaemon",
            dependencies: [
                "DocRoutePlatform", "DocRouteConfiguration", "DocRouteIntake", "DocRouteDelivery",
                "DocRouteServer", "DocRouteOperations",
                "DocRouteTypes", "DocRouteHandlers", .product(name: "DocRouteProtocol", package: "Swift"), "DocRouteSystemd",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .executableTarget(
            name: "docrouted",
            dependencies: [
                "DocRouteDaemon", "DocRoutePlatform", "DocRouteConfiguration", "DocRouteLedger", "DocRouteDelivery", "DocRouteFleet",
                "DocRouteServer", "DocRouteSystemd",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "docroutectl",
            dependencies: [
                "DocRouteTypes", "DocRouteHandlers", .product(name: "DocRouteProtocol", package: "Swift"), .product(name: "DocRouteClient", package: "Swift"), "DocRouteMail",
                "DocRoutePlatform", "DocRouteConfiguration", "DocRouteMaildir", "DocRouteIntake",
                // The ledger read-only, for `history` while docrouted does not answer.
                "DocRouteLedger",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // IOError's errno, to say why a connect failed.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "docroute-bench",
            dependencies: [
                "DocRouteTypes", "DocRouteHandlers", "CDocRouteShim",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // What every test target shares: temporary folders, fixtures, a line client, a Prometheus
        // text reader, the fault tests' delivery history checker (SHA-256 from swift-crypto). A
        // regular target so test targets can import it, kept under Tests/ and in no product, so
        // docrouted and docroutectl never link it.
        .target(
            name: "DocRouteTestSupport",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Tests/DocRouteTestSupport"
        ),
        .testTarget(name: "DocRouteTypesTests", dependencies: ["DocRouteTypes", "DocRouteTestSupport"]),
        .testTarget(
            name: "DocRouteHandlersTests",
            dependencies: ["DocRouteHandlers", "DocRouteTypes", "DocRouteTestSupport", .product(name: "Logging", package: "swift-log")],
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "DocRouteProtocolTests", dependencies: [.product(name: "DocRouteProtocol", package: "Swift"), "DocRouteTestSupport"]),
        // The Maildir tests drive the daemon's Maildir reading and intake too; Fixtures holds Python scripts.
        .testTarget(
            name: "DocRouteMailTests",
            dependencies: [
                "DocRouteMail", "DocRouteMaildir", "DocRoutePlatform", "DocRouteConfiguration", "DocRouteIntake",
                .product(name: "DocRouteProtocol", package: "Swift"), "DocRouteTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "DocRouteClientTests",
            dependencies: [
                .product(name: "DocRouteClient", package: "Swift"), .product(name: "DocRouteProtocol", package: "Swift"), "DocRouteTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "DocRouteDaemonTests",
            dependencies: [
                "DocRoutePlatform", "DocRouteConfiguration", "DocRouteIntake", "DocRouteLedger",
                "DocRouteDelivery", "DocRouteServer", "DocRouteOperations", "DocRouteDaemon", "DocRouteTestSupport",
                // The daemon tests build the intake's routing snapshot and a real event loop.
                "DocRouteHandlers", "DocRouteTypes", .product(name: "DocRouteProtocol", package: "Swift"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
                // The ledger tests checkpoint the write-ahead log before they damage the SQLite file.
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // A real PostgreSQL (Tests/DocRouteTestSupport/PostgresServer.swift) under the fleet's
        // configuration, schema and check.
        .testTarget(
            name: "DocRouteFleetTests",
            dependencies: [
                "DocRouteFleet", "DocRouteConfiguration", "DocRoutePlatform", "DocRouteTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "DocRouteSystemdTests",
            dependencies: ["DocRouteSystemd", "DocRouteTestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        // Runs the built docrouted and docroutectl; depends on them so `swift build --build-tests` builds them.
        .testTarget(name: "IntegrationTests", dependencies: [.product(name: "DocRouteProtocol", package: "Swift"), .product(name: "DocRouteClient", package: "Swift"), "DocRouteTestSupport", "docrouted", "docroutectl", "docroute-bench"]),
    ],
    swiftLanguageModes: [.v6]
)

// libFuzzer targets (make fuzz, docs/FUZZING.md): LLVMFuzzerTestOneInput and no main, so they link only
// with -sanitize=fuzzer; declared only when DOCROUTE_FUZZ=1, which keeps `swift build` unchanged.
if Context.environment["DOCROUTE_FUZZ"] == "1" {
    let fuzzTargets: [(name: String, libraries: [Target.Dependency])] = [
        ("FuzzManifestReader", ["DocRouteHandlers", "DocRouteTypes"]),
        ("FuzzMailParser", ["DocRouteMail"]),
        ("FuzzProtocolLine", [.product(name: "DocRouteProtocol", package: "Swift")]),
        ("FuzzContentSniffer", ["DocRouteTypes"]),
    ]
    package.targets.append(.target(name: "FuzzSupport", path: "Sources/FuzzSupport"))
    for target in fuzzTargets {
        package.products.append(.executable(name: target.name, targets: [target.name]))
        package.targets.append(.executableTarget(
            name: target.name,
            dependencies: target.libraries + ["FuzzSupport"],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ))
    }
}
