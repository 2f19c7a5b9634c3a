import DocRouteFleet
import Foundation
import Logging

/// Launch on demand in a fleet: a handler that deliveries are owed to and that no live host has
/// subscribed is launched on one host that can launch it (``FleetLaunchChoice``: the live host
/// with its launch command holding the fewest claims, ties by name). Every host looks; only the
/// chosen one launches, through its own launcher (the same backoff as on one host), and records
/// the launch so that no other host launches the handler while it may still subscribe. Once it
/// subscribes, the fleet's dispatcher claims its deliveries as for any subscribed handler.
///
/// It looks when `NOTIFY` names a handler (forwarded by the ``FleetDispatcher``) and otherwise
/// polls, from 1 s doubling to 30 s while nothing is owed to a handler connected nowhere. It also
/// publishes the handlers this host can launch when a reload changed them. A host with no launch
/// command in its manifests looks for nothing.
package actor FleetLauncher {
    let queue: FleetQueue
    let logger: Logger
    /// The handlers this host can launch (their manifest has a launch command), as loaded now.
    var launchable: (@Sendable () -> [String])?
    /// Launches a handler through this host's own launcher.
    var launch: (@Sendable (String) async -> Void)?
    /// Handlers whose deliveries wait for want of a live host to launch them, already logged.
    var waitingLogged: Set<String> = []
    /// What this host last published as launchable, so a reload that changes it is published.
    var published: [String]?
    var unreachable = false
    /// Ends a pause between looks early: a `NOTIFY`.
    let wakeUps = WakeUpSignal()

    /// The shortest pause between two looks: a burst of `NOTIFY`s costs one query a second at most.
    static let pause: Duration = .milliseconds(500)

    package init(queue: FleetQueue, logger: Logger) {
        self.queue = queue
        self.logger = logger
    }

    /// Takes what it needs from the daemon before ``run()``.
    package func start(launchable: @escaping @Sendable () -> [String], launch: @escaping @Sendable (String) async -> Void) {
        self.launchable = launchable
        self.launch = launch
    }

    /// Something may be owed to a handler connected nowhere (a `NOTIFY`).
    package nonisolated func wake() {
        wakeUps.poke()
    }

    /// Looks, launches and waits until cancelled.
    package func run() async {
        var backoff: Duration = .seconds(1)
        while !Task.isCancelled {
            let waiting = await look()
            guard (try? await Task.sleep(for: Self.pause)) != nil else { return }
            let poked = await wakeUps.sleep(upTo: waiting ? .seconds(1) : backoff)
            backoff = poked || waiting ? .seconds(1) : min(backoff * 2, .seconds(30))
        }
    }

    /// One look: for each handler this host can launch that is owed deliveries and subscribed on
    /// no live host, the fleet's decision, and the launch when it falls here. True when some
    /// handler was found so (its launch may take a while to subscribe: looked at again soon).
    func look() async -> Bool {
        guard let launchable, let launch else { return false }
        let handlers = launchable().sorted()
        if handlers != published {
            // Not published: this host is not registered yet (at a first start, its membership
            // may still be creating the schema) or the database is away, which the membership
            // reports. Nothing to look at until it is.
            guard (try? await queue.publishLaunchable(handlers)) == true else { return false }
            published = handlers
        }
        guard !handlers.isEmpty else { return false }
        let owed: [String]
        do {
            owed = try await queue.owedUnsubscribed(among: handlers)
            if unreachable {
                unreachable = false
                logger.notice("fleet: launches on demand are looked for again")
            }
        } catch {
            if !unreachable {
                unreachable = true
                logger.warning("fleet: handlers connected nowhere cannot be looked for: \(error.message) (\(error.code.rawValue)); trying again by itself")
            }
            return false
        }
        waitingLogged.formIntersection(owed.map { $0.lowercased() })
        let host = queue.hostName
        for handler in owed {
            let decision: FleetLaunchChoice.Decision
            do {
                decision = try await queue.launchDecision(for: handler)
            } catch {
                logger.warning("fleet: which host launches the handler could not be decided: \(error.message)", metadata: ["bundle-id": "\(handler)"])
                continue
            }
            switch decision {
            case .launch(let chosen) where chosen == host:
                logger.info("fleet: launching a handler owed deliveries and connected on no host", metadata: ["bundle-id": "\(handler)", "host": "\(host)"])
                await launch(handler)
            case .launching(let chosen) where chosen == host:
                // Launched here already: this host's launcher decides whether to start it again
                // (not while it runs, and after its backoff when it exited without subscribing).
                await launch(handler)
            case .nowhere:
                if waitingLogged.insert(handler.lowercased()).inserted {
                    logger.warning("fleet: deliveries wait: \(handler) is \(decision.explanation)", metadata: ["bundle-id": "\(handler)"])
                }
            case .launch, .launching, .subscribed:
                logger.debug("fleet: a handler connected nowhere is \(decision.explanation)", metadata: ["bundle-id": "\(handler)"])
            }
        }
        return !owed.isEmpty
    }
}
