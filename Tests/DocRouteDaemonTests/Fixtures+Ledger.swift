import DocRouteTestSupport
import SystemPackage
@testable import DocRouteLedger

extension Fixtures {
    /// A ledger in `<folder>/state`, as the daemon opens it.
    static func ledger(_ folder: TemporaryFolder) throws -> DeliveryLedger {
        try DeliveryLedger(stateDirectory: folder.path("state"), logger: logger)
    }
}
