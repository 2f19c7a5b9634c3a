/// Runs `body` with `resource`, then `tearDown`, whether `body` throws or not: the `defer` of async
/// tests, whose tear-down must await (stop a watcher, close a ledger off the cooperative pool).
public func withTearDown<Resource>(
    _ resource: Resource, _ tearDown: (Resource) async -> Void, _ body: (Resource) async throws -> Void
) async throws {
    do {
        try await body(resource)
    } catch {
        await tearDown(resource)
        throw error
    }
    await tearDown(resource)
}
