# docroute: two commands do all set-up on a fresh Debian machine (as root):
#   make run    build and run docrouted in the foreground on ./run/
#   make test   install what the tests need, build, and pass the tests
SHELL := /bin/bash
.DEFAULT_GOAL := help

SWIFT ?= swift
PREFIX ?= /usr/local
DESTDIR ?=
RUN_ROOT := $(CURDIR)/run
# Seconds each libFuzzer target runs under `make fuzz`.
FUZZ_SECONDS ?= 60
BIN_DEBUG = $(shell $(SWIFT) build --show-bin-path 2>/dev/null)

# Debian packages, installed only when missing. `make run` (and build, install, man) takes what
# building and running docrouted needs; the tests add their tools, and the package and the
# container test (both run by the tests too) theirs.
APT_RUN_PACKAGES := build-essential libsystemd-dev pkg-config libsqlite3-dev shared-mime-info libglib2.0-bin
APT_TEST_PACKAGES := python3 python3-venv inotify-tools socat systemd file strace fiu-utils groff-base man-db postgresql openssl
APT_PACKAGING_PACKAGES := debootstrap systemd-container debhelper dpkg-dev lintian
APT_PACKAGES := $(APT_RUN_PACKAGES) $(APT_TEST_PACKAGES) $(APT_PACKAGING_PACKAGES)

.PHONY: help deps run-deps man build release run test chaos container-test bench bench-ext4 bench-fleet clean install fuzz fuzz-smoke deb

help:
	@echo "make run     build and run docrouted on an embedded default configuration under ./run"
	@echo "make man     the man pages into .build/man (man -l .build/man/docroutectl.1)"
	@echo "make test    install what is missing, build, run the whole test suite"
	@echo "make bench   release build and the benchmark suite (figures for the README)"
	@echo "make bench-ext4   the comparison again on a journaled ext4 image on the same disk (root)"
	@echo "make bench-fleet  the fleet's benchmarks against a PostgreSQL of their own (root, postgresql 15)"
	@echo "make fuzz    libFuzzer targets, FUZZ_SECONDS (default 60) each (docs/FUZZING.md)"
	@echo "make install PREFIX=/usr DESTDIR=...   binaries, man pages, completions, units and configuration"
	@echo "make deb     docroute_<version>_amd64.deb (debhelper, static Swift runtime), checked by lintian"

# $(call install-missing,PACKAGES,TARGET): apt-get install of those not installed yet.
define install-missing
@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "error: missing Debian packages:$$missing; run 'make $(2)' as root" >&2; exit 1; fi; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

deps:
	$(call install-missing,$(APT_PACKAGES),deps)

run-deps:
	$(call install-missing,$(APT_RUN_PACKAGES),run-deps)

build: run-deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

run: build
	@BIN_DIR="$(BIN_DEBUG)" FLEET_DATABASE="$(FLEET_DATABASE)" FLEET_HOST="$(FLEET_HOST)" FLEET_PASSWORD_FILE="$(FLEET_PASSWORD_FILE)" \
		scripts/make-run-config.sh "$(RUN_ROOT)"
	@PATH="$(BIN_DEBUG):$$PATH" exec $(BIN_DEBUG)/docrouted --config "$(RUN_ROOT)/docroute.toml"

# The man pages as they are installed, readable from the checkout: man -l .build/man/docroutectl.1
MAN_DIR := $(CURDIR)/.build/man
man: build
	$(SWIFT) build --product generate-manual
	scripts/make-man.sh "$(BIN_DEBUG)" "$(MAN_DIR)"
	@echo "read them with: man -l $(MAN_DIR)/docroutectl.1   (also docrouted.8, docroute.toml.5)"

test: deps
	$(SWIFT) build --build-tests
	# generate-manual too, for the install script's man-page test (InstallScriptIntegrationTests).
	$(SWIFT) build --product generate-manual
	# Every man page as `make man` writes it, rendered by groff with all warnings on: none may warn.
	scripts/make-man.sh "$(BIN_DEBUG)" "$(MAN_DIR)"
	scripts/check-man.sh "$(MAN_DIR)"
	scripts/verify-units.sh "$(BIN_DEBUG)/docrouted" "$(BIN_DEBUG)/docroutectl"
	# Every import against docs/ARCHITECTURE.md's table and Package.swift's declared dependencies;
	# the C library and shim only in DocRoutePlatform (scripts/layer-exceptions.txt). Then the
	# check itself, failing on a planted violation of each kind in a small package.
	python3 scripts/check-layers.py
	python3 scripts/test_check_layers.py
	# A handler depending on the Swift client package resolves none of the daemon's dependencies.
	SWIFT="$(SWIFT)" scripts/check-client-package.sh
	# Unit suites, 10 s of each fuzz target (docs/FUZZING.md), then the integration suites (real
	# daemons, blocking waits) on their own, so their waits never starve the async tests of the
	# two-core machine's cooperative threads.
	# The mail tests run Python's email package in a child process from synchronous tests, which
	# hold the cooperative pool's threads (two on two cores) while it runs: on their own, so the
	# daemon's timed tests beside them do not stall for twenty seconds.
	$(SWIFT) test --skip-build --skip IntegrationTests --skip DocRouteMailTests
	$(SWIFT) test --skip-build --filter DocRouteMailTests
	# shared-mime-info's own detection suite (../shared/conformance) against docroutectl type:
	# fails below 99% agreement, prints the figure and every miss, skips when ../shared is absent.
	python3 scripts/mime-conformance.py "$(BIN_DEBUG)/docroutectl"
	# The Python client, installed with pip into a throwaway venv as a handler author installs it,
	# then its unittest suite with that venv's python against the debug docrouted. setuptools'
	# build folder goes first: it would put a module since removed from src into the wheel.
	rm -rf Clients/Python/build
	venv=$$(mktemp -d /tmp/docroute-venv.XXXXXX) && trap 'rm -rf "$$venv"' EXIT && \
	  python3 -m venv "$$venv" && "$$venv/bin/pip" install ./Clients/Python && \
	  DOCROUTE_BIN_DIR="$(BIN_DEBUG)" DOCROUTE_PYTHON_INSTALLED=1 \
	  "$$venv/bin/python" -m unittest discover -s Clients/Python/tests -t Clients/Python/tests
	SWIFT="$(SWIFT)" Fuzz/run.sh 10
	$(SWIFT) test --skip-build --filter IntegrationTests

# A real systemd in a Debian bookworm container (root; debootstrap, systemd-nspawn, a static release
# build): socket activation, journal fields, watchdog restart. See scripts/systemd-container-test.sh.
container-test: deps
	scripts/systemd-container-test.sh

# libFuzzer with AddressSanitizer on the manifest reader, mail parser, protocol line decoder and content
# sniffer (Sources/Fuzz*, seeds in Fuzz/Corpus); built in .build-fuzz, where the grown corpus stays.
fuzz: deps
	SWIFT="$(SWIFT)" Fuzz/run.sh $(FUZZ_SECONDS)

fuzz-smoke: deps
	SWIFT="$(SWIFT)" Fuzz/run.sh 10

# The long forms: 20,000-file crash test with ten restarts; a 30 s status flood as nobody; a
# package 10,000 folders deep; a flood of connections from ten users beside a real handler; 250
# half lines of 900 KiB; a 30 s descriptor hoard as nobody; 200,000 folders made in an inbox; a
# 1 GiB sparse file opened three times as nobody; 200 URLs of 1 MB and 5,000 of 8,000 bytes as nobody;
# the I/O fault tests (docs/TESTING.md): 24 rounds of strace faults with a restart after each
# (DOCROUTE_FAULT_SEED=<printed seed> replays one), five libfiu runs, and the DOCROUTE_FAULT sweep
# of every kind of call until N passes the last call; the fleet's: 10,000 files shared by two handler
# hosts, 3,000 around a PostgreSQL restart, a 1 GiB document in bounded memory, 20 empty databases
# raced for by two hosts.
chaos: deps
	$(SWIFT) build --build-tests
	DOCROUTE_CRASH_FILES=20000 DOCROUTE_CRASH_RESTARTS=10 $(SWIFT) test --skip-build --filter killedAtRandomMoments
	DOCROUTE_CHAOS_LEDGER_FILES=5000 $(SWIFT) test --skip-build --filter LedgerDamageIntegrationTests
	DOCROUTE_CHAOS_CHANGED_MIB=512 $(SWIFT) test --skip-build --filter ChangedSourceIntegrationTests
	DOCROUTE_FLOOD_SECONDS=30 $(SWIFT) test --skip-build --filter aStatusFloodAsNobodyIsRefusedAndTheDaemonSurvives
	DOCROUTE_DEEP_PACKAGE_LEVELS=10000 $(SWIFT) test --skip-build --filter aPackageDeeperThanTheLimitIsQuarantinedAndTheDaemonGoesOn
	DOCROUTE_FLOOD_CONNECTIONS_PER_UID=200 $(SWIFT) test --skip-build --filter aConnectionFloodLeavesRoomForARealHandler
	DOCROUTE_HALF_LINE_CONNECTIONS=250 $(SWIFT) test --skip-build --filter unfinishedLinesAreCappedAndTheirMemoryGivenBack
	DOCROUTE_HOSTILE_SECONDS=30 $(SWIFT) test --skip-build --filter aDescriptorHoardNeitherCrashesTheDaemonNorStarvesAHandler
	DOCROUTE_FOLDER_FLOOD=200000 $(SWIFT) test --skip-build --filter aFolderFloodLeavesTheDaemonServing
	DOCROUTE_SPARSE_MIB=1024 DOCROUTE_SPARSE_OPENS=3 $(SWIFT) test --skip-build --filter aSparseFileOpenedAgainAndAgainAsNobodyStaysSparseInTheSandbox
	DOCROUTE_URL_FLOOD_HUGE=200 DOCROUTE_URL_FLOOD_LONG=5000 $(SWIFT) test --skip-build --filter aURLFloodAsNobodyLeavesTheLedgerBounded
	DOCROUTE_CHAOS_SPARSE_GIB=16384 DOCROUTE_CHAOS_SLOW_DOCUMENTS=20 $(SWIFT) test --skip-build --filter LedgerRebuildIntegrationTests --filter aPlacedPackageGivenAHugeSparseFileIsSettledWithoutReadingIt
	DOCROUTE_CHAOS_REMOVED_COPY_MIB=1024 $(SWIFT) test --skip-build --filter RemovedCopyIntegrationTests
	DOCROUTE_FAULT_ROUNDS=24 DOCROUTE_FAULT_ROUND_FILES=12 $(SWIFT) test --skip-build --filter faultsOfOneKindAtRandomThenARestartLoseAndDoubleNothing
	DOCROUTE_FIU_ROUNDS=5 DOCROUTE_FIU_FILES=24 DOCROUTE_FIU_SECONDS=15 $(SWIFT) test --skip-build --filter randomLibfiuFaultsNeverAnnounceAMissingOrIncompleteFile
	DOCROUTE_FAULT_SWEEP_KINDS=open,read,write,copy,fsync,rename,unlink DOCROUTE_FAULT_SWEEP_LIMIT=400 DOCROUTE_FAULT_SWEEP_FILES=6 \
		$(SWIFT) test --skip-build --filter theNthCallOfEachKindFailingLosesAndDoublesNothing
	DOCROUTE_FLEET_BURST_FILES=10000 $(SWIFT) test --skip-build --filter twoHandlerHostsShareABurstAndEachDocumentIsDeliveredOnce
	DOCROUTE_FLEET_RESTART_FILES=3000 $(SWIFT) test --skip-build --filter postgreSQLStoppedMidBurstLosesAndDoublesNothing
	DOCROUTE_FLEET_LARGE_MIB=1024 $(SWIFT) test --skip-build --filter aLargeDocumentCrossesTheFleetInBoundedMemory
	DOCROUTE_FLEET_START_RACES=20 $(SWIFT) test --skip-build --filter twoHostsStartingOnAnEmptyDatabaseMigrateItOnce

# The Debian package, built by dpkg-buildpackage and debhelper from debian/ and checked by lintian
# (scripts/build-deb.sh). The static release build lives where the container test keeps its own
# (scripts/release-build.sh), so `make test` and `make deb` build it once between them.
DEB_SCRATCH_PATH ?= $(CURDIR)/.build-container/swift-build
deb: deps
	DOCROUTE_SCRATCH_PATH="$(DEB_SCRATCH_PATH)" SWIFT="$(SWIFT)" scripts/build-deb.sh "$(CURDIR)"

# The binaries the package ships (scripts/release-build.sh: the Swift runtime linked statically, so
# they run without a Swift toolchain installed; hardened and lean linking); man pages from
# swift-argument-parser's generate-manual tool, built beside them, plus the hand-written sections
# in docs/man.
install: run-deps
	bindir=$$(SWIFT="$(SWIFT)" scripts/release-build.sh) && scripts/install.sh "$(PREFIX)" "$(DESTDIR)" "$$bindir"

# About 11 minutes on a quiet 2-core machine (every wait has a limit). Tables on the terminal, every
# figure as JSON in $(BENCH_JSON) for the README. `docroute-bench compare --quick` is the short form.
# The daemon measured is the static release build that the package ships (scripts/release-build.sh,
# shared with `make test` and `make deb`): its resident memory is the one an admin sees, 2 to 5 MiB
# below the build linked to the toolchain's shared libraries (docs/BENCHMARKS.md).
BENCH_JSON ?= $(CURDIR)/.build/bench-figures.json
bench: release
	cd "$(CURDIR)" && shipped=$$(DOCROUTE_SCRATCH_PATH="$(DEB_SCRATCH_PATH)" SWIFT="$(SWIFT)" scripts/release-build.sh) \
		&& DOCROUTE_BENCH_DAEMON="$$shipped/docrouted" $$($(SWIFT) build -c release --show-bin-path)/docroute-bench all --json > "$(BENCH_JSON)"
	@echo "figures as JSON: $(BENCH_JSON)"

# The same comparison with the trees on a default (journaled) ext4 in an image file on the same disk:
# this machine's root file system has no journal, which makes every new file cost more after many
# removals (see bench/on-journaled-ext4.sh). Root only (loop mount).
BENCH_EXT4_JSON ?= $(CURDIR)/.build/bench-figures-ext4.json
bench-ext4: release
	cd "$(CURDIR)" && bench/on-journaled-ext4.sh compare --files 10000 --rate 200 --latency-seconds 30 --backlog 10000 --idle-seconds 0 --json > "$(BENCH_EXT4_JSON)"
	@echo "figures as JSON: $(BENCH_EXT4_JSON)"

# The fleet's benchmarks (bench/fleet-*.py; root, Debian's postgresql 15 package; each starts a
# PostgreSQL and docrouted hosts of its own under .build and stops them): a burst against one host,
# latency at 200 files/s against one host, one handler's instances on 1, 2 and 4 hosts, and 1 GiB
# against psql's \lo_import. About 15 minutes on a quiet 2-core machine. FLEET_DAEMON=<docrouted>
# measures that binary instead of the shipped static release build.
FLEET_DAEMON ?=
bench-fleet:
	cd "$(CURDIR)" && daemon="$(FLEET_DAEMON)" \
		&& if [ -z "$$daemon" ]; then daemon="$$(DOCROUTE_SCRATCH_PATH="$(DEB_SCRATCH_PATH)" SWIFT="$(SWIFT)" scripts/release-build.sh)/docrouted"; fi \
		&& bench/fleet-burst.py "$$daemon" 10000 --rounds=3 \
		&& bench/fleet-latency.py "$$daemon" --rate=200 --seconds=20 --rounds=3 \
		&& bench/fleet-scaling.py "$$daemon" 2000 --instances=1,2,4 --work-ms=20 \
		&& bench/fleet-large.py "$$daemon" --size-mib=1024 --rounds=3

clean:
	rm -rf .build .build-fuzz .build-deb run docroute_*.deb
