import DocRouteTestSupport
import SystemPackage
@testable import DocRouteConfiguration
@testable import DocRouteDaemon
@testable import DocRouteDelivery
@testable import DocRouteIntake
@testable import DocRouteLedger
@testable import DocRouteMaildir
@testable import DocRouteOperations
@testable import DocRoutePlatform
@testable import DocRouteServer

extension Fixtures {
    /// A ledger in `<folder>/state`, as the daemon opens it.
    static func ledger(_ folder: TemporaryFolder) throws -> DeliveryLedger {
        try DeliveryLedger(stateDirectory: folder.path("state"), logger: logger)
    }
}
