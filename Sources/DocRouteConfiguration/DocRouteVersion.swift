/// docroute's release number, kept in this one place: `docrouted --version`, `docroutectl
/// --version` and the `daemon` field of `welcome` and `status` all read it, and a test holds
/// debian/changelog's newest entry to it. Here because both programs import this target, and the
/// release is the daemon package's, not the client library's.
package enum DocRouteVersion {
    /// The release, e.g. `0.2.0`.
    package static let number = "0.2.0"
    /// What `welcome` and `status` name the daemon: `docrouted/0.2.0`.
    package static let daemon = "docrouted/" + number
}
