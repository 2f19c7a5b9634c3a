// swift-tools-version:6.0
import PackageDescription

// The client side of docroute, for handlers and tools written in Swift: the wire protocol's
// messages and framing (DocRouteProtocol), the error shape they share (DocRouteErrors), and the
// client library (DocRouteClient). A package of its own so that a handler author who depends on it
// resolves SwiftNIO, swift-log and swift-crypto, never what only the daemon uses (GRDB, TOMLKit,
// swift-prometheus). The daemon's package depends on it by path.
let package = Package(
    name: "docroute-client",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "DocRouteClient", targets: ["DocRouteClient"]),
        .library(name: "DocRouteProtocol", targets: ["DocRouteProtocol"]),
        .library(name: "DocRouteErrors", targets: ["DocRouteErrors"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
    ],
    targets: [
        // The one error shape every domain uses (DocRouteError, SourceLocation); no dependencies.
        .target(name: "DocRouteErrors"),
        // Pure logic: PROTOCOL.md as messages and line framing. Shared by the daemon and clients.
        .target(name: "DocRouteProtocol", dependencies: ["DocRouteErrors"]),
        // sendmsg with SCM_RIGHTS (open-descriptor) needs the CMSG macros, which Swift cannot call.
        .target(name: "CDocRouteClientShim"),
        // The library for handlers: subscribe, events, acknowledgements, Open In…, bookmarks.
        .target(
            name: "DocRouteClient",
            dependencies: [
                "DocRouteErrors", "DocRouteProtocol", "CDocRouteClientShim",
                // A bookmark's digest prefix is SHA-256.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
