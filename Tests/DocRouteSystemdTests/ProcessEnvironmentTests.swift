import DocRouteSystemd
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Everything that reads or changes the process environment or descriptor 3 runs here, one test
/// at a time: setenv is not safe against concurrent getenv.
@Suite(.serialized) struct ProcessEnvironmentTests {
    @Suite struct Notifier {
        /// Runs `body` with NOTIFY_SOCKET naming a datagram socket the test reads.
        func withNotifySocket(_ body: (UnixSocket) throws -> Void) throws {
            let socket = try UnixSocket(type: CInt(SOCK_DGRAM.rawValue), listening: false)
            defer { socket.close() }
            try withEnvironment(["NOTIFY_SOCKET": socket.path]) { try body(socket) }
        }

        @Test func readySendsExactlyReady() throws {
            try withNotifySocket { (socket: UnixSocket) throws in
                #expect(try SystemdNotifier().ready())
                #expect(try socket.receiveDatagram() == "READY=1")
            }
        }

        @Test func stoppingStatusAndWatchdogSendTheirAssignments() throws {
            try withNotifySocket { (socket: UnixSocket) throws in
                let notifier = SystemdNotifier()
                #expect(notifier.isEnabled)
                try notifier.status("Routing 3 inboxes")
                #expect(try socket.receiveDatagram() == "STATUS=Routing 3 inboxes")
                try notifier.watchdogPing()
                #expect(try socket.receiveDatagram() == "WATCHDOG=1")
                try notifier.stopping()
                #expect(try socket.receiveDatagram() == "STOPPING=1")
                try notifier.extendTimeout(microseconds: 5_000_000)
                #expect(try socket.receiveDatagram() == "EXTEND_TIMEOUT_USEC=5000000")
                try notifier.extendTimeout(by: .milliseconds(1500))
                #expect(try socket.receiveDatagram() == "EXTEND_TIMEOUT_USEC=1500000")
            }
        }

        @Test func statusCannotSmuggleOtherAssignments() throws {
            try withNotifySocket { (socket: UnixSocket) throws in
                try SystemdNotifier().status("bad\nREADY=1")
                #expect(try socket.receiveDatagram() == "STATUS=bad READY=1")
            }
        }

        @Test func reloadingCarriesTheMonotonicClock() throws {
            try withNotifySocket { (socket: UnixSocket) throws in
                let before = monotonicMicroseconds()
                try SystemdNotifier().reloading()
                let after = monotonicMicroseconds()
                let text = try #require(try socket.receiveDatagram())
                let lines = text.split(separator: "\n").map(String.init)
                #expect(lines.count == 2)
                #expect(lines.first == "RELOADING=1")
                let stamp = try #require(lines.last?.split(separator: "=").last.flatMap { UInt64($0) })
                #expect(lines.last?.hasPrefix("MONOTONIC_USEC=") == true)
                #expect(stamp >= before && stamp <= after)
            }
        }

        @Test func withoutNotifySocketNothingIsSent() throws {
            try withNotifySocket { (socket: UnixSocket) throws in
                try withEnvironment(["NOTIFY_SOCKET": nil]) { () throws in
                    let notifier = SystemdNotifier()
                    #expect(!notifier.isEnabled)
                    #expect(try notifier.ready() == false)
                    #expect(try notifier.watchdogPing() == false)
                }
                #expect(try socket.receiveDatagram(wait: false) == nil)
            }
        }

        @Test func anUnreachableSocketIsATypedError() throws {
            try withEnvironment(["NOTIFY_SOCKET": "/nonexistent/docroute-test/notify"]) { () throws in
                let error = try #require(throws: SystemdError.self) { try SystemdNotifier().ready() }
                #expect(error.code == .notifyFailed)
                #expect(error.errno == ENOENT)
                #expect(error.description.contains("READY=1"))
            }
        }

        @Test func watchdogIntervalIsHalfOfWatchdogUsec() {
            withEnvironment(["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": String(getpid())]) {
                #expect(SystemdNotifier().watchdogInterval == .seconds(15))
            }
            withEnvironment(["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": String(getpid() + 1)]) {
                #expect(SystemdNotifier().watchdogInterval == nil)
            }
            withEnvironment(["WATCHDOG_USEC": nil, "WATCHDOG_PID": nil]) {
                #expect(SystemdNotifier().watchdogInterval == nil)
            }
        }

        private func monotonicMicroseconds() -> UInt64 {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
        }
    }

    @Suite struct Activation {
        /// The variables systemd sets for one passed socket.
        func activationEnvironment(names: String = "docroute", pid: pid_t = getpid(), count: String = "1")
            -> [String: String?]
        {
            ["LISTEN_PID": String(pid), "LISTEN_FDS": count, "LISTEN_FDNAMES": names]
        }

        @Test func passedListenerIsFoundByNameAndTheEnvironmentIsCleared() throws {
            let listener = try UnixSocket(type: CInt(SOCK_STREAM.rawValue), listening: true)
            defer { listener.close() }
            let report = try ActivatedChild.run(passing: listener, names: "docroute")
            #expect(report["error"] == nil, "\(report)")
            #expect(report["descriptors"] == "docroute=3")
            #expect(report["docroute"] == "3")
            #expect(report["accepted"] == "true")
            // Handlers the daemon launches later must not think the socket is theirs.
            #expect(report["LISTEN_PID"] == "unset")
            #expect(report["LISTEN_FDS"] == "unset")
            #expect(report["LISTEN_FDNAMES"] == "unset")
            #expect(report["cloexec"] == "true")
        }

        @Test func aDatagramSocketIsRejectedWithATypedError() throws {
            let datagram = try UnixSocket(type: CInt(SOCK_DGRAM.rawValue), listening: false)
            defer { datagram.close() }
            let report = try ActivatedChild.run(passing: datagram, names: "docroute")
            #expect(report["error"] == "not-a-unix-stream-listener")
            #expect(report["message"]?.contains("not a listening AF_UNIX stream socket") == true)
        }

        @Test func aStreamSocketThatDoesNotListenIsRejected() throws {
            let idle = try UnixSocket(type: CInt(SOCK_STREAM.rawValue), listening: false)
            defer { idle.close() }
            let report = try ActivatedChild.run(passing: idle, names: "docroute")
            #expect(report["error"] == "not-a-unix-stream-listener")
        }

        @Test func anotherNameIsListedButNotReturnedForDocroute() throws {
            let listener = try UnixSocket(type: CInt(SOCK_STREAM.rawValue), listening: true)
            defer { listener.close() }
            let report = try ActivatedChild.run(passing: listener, names: "metrics")
            #expect(report["descriptors"] == "metrics=3")
            #expect(report["docroute"] == "none")
            #expect(report["error"] == nil)
        }

        @Test func notActivatedMeansNoDescriptors() throws {
            try withEnvironment(["LISTEN_PID": nil, "LISTEN_FDS": nil, "LISTEN_FDNAMES": nil]) { () throws in
                #expect(try SocketActivation.listenedDescriptors().isEmpty)
                #expect(try SocketActivation().descriptor() == nil)
            }
        }

        @Test func variablesForAnotherProcessAreIgnored() throws {
            try withEnvironment(activationEnvironment(pid: getpid() + 1)) { () throws in
                #expect(try SocketActivation.listenedDescriptors().isEmpty)
            }
        }

        @Test func malformedVariablesAreATypedError() throws {
            try withEnvironment(activationEnvironment(count: "three")) { () throws in
                let error = try #require(throws: SystemdError.self) { try SocketActivation.listenedDescriptors() }
                #expect(error.code == .socketActivationFailed)
                #expect(error.errno == EINVAL)
            }
        }
    }

    @Suite struct Bootstrap {
        @Test func journalStreamMatchingStderrChoosesTheJournal() throws {
            let stderrIdentity = try #require(LoggingBootstrap.StreamIdentity(fileDescriptor: STDERR_FILENO))
            withEnvironment(["JOURNAL_STREAM": stderrIdentity.description]) {
                #expect(LoggingBootstrap.choose().destination == .journal)
            }
            withEnvironment(["JOURNAL_STREAM": "\(stderrIdentity.device):\(stderrIdentity.inode &+ 1)"]) {
                #expect(LoggingBootstrap.choose().destination == .standardError)
                #expect(LoggingBootstrap.choose(forceJournal: true).destination == .journal)
            }
            withEnvironment(["JOURNAL_STREAM": nil]) {
                #expect(LoggingBootstrap.choose().destination == .standardError)
            }
        }
    }
}

@Suite struct LoggingDestinationTests {
    let stderrIdentity = LoggingBootstrap.StreamIdentity(device: 24, inode: 4711)

    @Test func matchingStreamMeansJournal() {
        #expect(
            LoggingBootstrap.destination(journalStream: "24:4711", standardError: stderrIdentity, forceJournal: false)
                == .journal)
    }

    @Test(arguments: [nil, "", "24", "24:", ":4711", "24:4712", "25:4711", "x:y", "24:4711:1"])
    func anythingElseMeansStderr(journalStream: String?) {
        #expect(
            LoggingBootstrap.destination(
                journalStream: journalStream, standardError: stderrIdentity, forceJournal: false) == .standardError)
    }

    @Test func closedStderrMeansStderrUnlessForced() {
        #expect(LoggingBootstrap.destination(journalStream: "24:4711", standardError: nil, forceJournal: false) == .standardError)
        #expect(LoggingBootstrap.destination(journalStream: nil, standardError: nil, forceJournal: true) == .journal)
    }

    @Test func handlersMatchTheDestination() {
        let journal = LoggingBootstrap(destination: .journal, syslogIdentifier: "docroute-test", logLevel: .debug)
        let handler = journal.makeLogHandler(label: "x", metadataProvider: nil)
        #expect((handler as? JournalLogHandler)?.syslogIdentifier == "docroute-test")
        #expect(handler.logLevel == .debug)
        let stderr = LoggingBootstrap(destination: .standardError, logLevel: .notice)
        let streamHandler = stderr.makeLogHandler(label: "x", metadataProvider: nil)
        #expect(!(streamHandler is JournalLogHandler))
        #expect(streamHandler.logLevel == .notice)
    }
}
