import SystemPackage

extension FileDescriptor {
    /// Removes a scratch file of this folder, if it is there. Only ever a clean-up: a scratch
    /// file left behind is removed with the other leftovers at the next start.
    func removeIfPresent(_ name: String) {
        guard let component = FilePath.Component(name) else { return }
        _ = try? unlink(component)
    }
}
