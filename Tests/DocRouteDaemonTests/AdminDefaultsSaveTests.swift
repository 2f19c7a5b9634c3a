import DocRouteHandlers
import Foundation
import SystemPackage
import Testing
import DocRouteTestSupport

/// `docroutectl default set` writes defaults.json with the daemon's one atomic writer.
@Suite struct AdminDefaultsSaveTests {
    @Test func savedDefaultsAreReadBackAndNothingIsLeftBeside() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        // The state directory does not exist yet: saving creates it.
        let store = AdminDefaultsStore(stateDirectory: scratch.path("state").string)
        let defaults = AdminDefaults(types: ["public.png": "com.example.a"], schemes: ["todolist": "com.example.b"])
        try store.save(defaults)
        #expect(try store.load() == defaults)
        #expect(scratch.read("state/defaults.json") == (try store.encoded(defaults)))
        // Replacing leaves one file, readable by the daemon's user whatever the umask.
        try store.save(AdminDefaults(types: ["public.png": "com.example.c"]))
        #expect(try store.load().handler(forType: "public.png") == "com.example.c")
        #expect(scratch.list("state") == ["defaults.json"])
        let mode = try FileManager.default.attributesOfItem(atPath: store.path)[.posixPermissions] as? Int
        #expect(mode == 0o644)
    }
}
