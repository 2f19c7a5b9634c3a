import DocRouteTestSupport
import Foundation
@testable import DocRouteConfiguration

extension Fixtures {
    /// A configuration with every folder in `folder` (`state`, `state/containers`, `quarantine`,
    /// `handlers.d`, one drop inbox `drop`), the folders made as docrouted's start makes them.
    static func daemonConfiguration(in folder: TemporaryFolder, extra: String = "") throws -> DaemonConfiguration {
        let text = """
            socket = "\(folder.string("s.sock"))"
            state_directory = "\(folder.string("state"))"
            handlers_directory = "\(folder.string("handlers.d"))"
            quarantine_directory = "\(folder.string("quarantine"))"
            \(extra)
            [[inbox]]
            path = "\(folder.string("drop"))"
            """
        let configuration = try DaemonConfiguration.parse(text, file: folder.string("docroute.toml"))
        for path in [configuration.stateDirectory, configuration.containersDirectory, configuration.quarantineDirectory,
                     configuration.handlersDirectory, folder.string("drop")] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        return configuration
    }
}
