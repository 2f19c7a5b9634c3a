import DocRouteIntake
import DocRouteLedger
import DocRoutePlatform
import Foundation
import Logging
import Synchronization
import SystemPackage

extension LedgerBackend {
    /// Delivers a package document whole on the delivery pool (see
    /// ``DeliveryBatch/deliverPackage(_:)``), after creating its sandbox if it is a default one.
    package func deliverPackage(_ package: PackageDelivery) async -> DocumentDeliveryOutcome {
        // A package counts as one delivery; its bytes are known only once it is walked.
        let reservation: PendingTally.Reservation
        switch reserve(bundleIdentifier: package.bundleIdentifier, userID: nil, bytes: 0) {
        case .success(let taken): reservation = taken
        case .failure(let error): return .failed(error)
        }
        defer { ledger.pendingTally.release(reservation) }
        prepareContainer(package.containerRoot, owner: package.owner)
        do {
            return DocumentDeliveryOutcome(try await blocking { [batch] in batch.deliverPackage(package) })
        } catch {
            return .failed(DeliveryError(code: .io, message: "the delivery worker is stopped: \(error)", cause: error))
        }
    }

    package func vetPackage(name: [UInt8], in folder: Int32, path: String) async -> String? {
        if let mark = poisonedPackages.withLock({ $0[path] }) {
            return "docrouted crashed while it had this package in hand (taken up at \(mark.startedAt); runs interrupted with it: \(mark.interruptions)); it is set aside so that it cannot crash the daemon again. Look at it, then move it back into the inbox to try again"
        }
        let limits = PackageTree.Limits(maxDepth: configuration.maxPackageDepth, maxEntries: configuration.maxPackageEntries)
        do {
            return try await blocking { [ledger] in
                // A crash on this thread must still reach the crash marker, even from a full stack.
                try? CrashSignals.ensureAlternateStack()
                try ledger.markInHand(path)
                // Gone or not a folder any more (or no name of one file): the delivery reports it.
                guard let component = PackageTree.component(name),
                      let opened = try? FileDescriptor(rawValue: folder).openDirectory(component) else { return nil }
                defer { opened.closeIgnoringErrors() }
                guard let exceeded = try PackageTree.exceeded(limits, in: opened.rawValue, describing: path) else { return nil }
                return exceeded + "; it is set aside whole. Raise the limit in docroute.toml if such packages are expected, then move it back into the inbox"
            }
        } catch {
            logger.warning("a package could not be checked before delivery; delivering it all the same", metadata: ["path": "\(path)", "error": "\(error)"])
            return nil
        }
    }

    package func doneWithPackage(path: String) async {
        poisonedPackages.withLock { $0[path] = nil }
        do {
            try await blocking { [ledger] in try ledger.clearInHand(path) }
        } catch {
            logger.warning("the in-hand mark of a package could not be cleared; a restart may set it aside", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }

    /// At start, after recovery: the marks the last run left. Poisoned inputs are kept for the
    /// intake to set aside when it meets them (at the start scan).
    func settlePoisonMarks() async {
        let crashedWith = CrashMarker.takeAndArm(stateDirectory: configuration.stateDirectory, logger: logger)
        if let crashedWith {
            logger.error("the last run of docrouted crashed (signal \(crashedWith))")
        }
        do {
            let marks = try await blocking { [ledger] in try ledger.settleMarks(previousRunCrashed: crashedWith != nil) }
            poisonedPackages.withLock { poisoned in
                for mark in marks { poisoned[mark.sourcePath] = mark }
            }
            for mark in marks {
                logger.error("an input that stopped docrouted will be set aside", metadata: [
                    "message-id": "input-poisoned", "path": "\(mark.sourcePath)", "interruptions": "\(mark.interruptions)",
                ])
            }
        } catch {
            logger.error("the marks of inputs in hand at the last stop could not be read: \(error)")
        }
    }
}
