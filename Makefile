# reachd — build, test, run, install.
SWIFT ?= swift
PREFIX ?= /usr/local
DESTDIR ?=
BUILD_FLAGS ?=

.PHONY: all build build-tests deps gio test test-debug test-checks test-release run clean bench fuzz check-gio-fuzz check-units check-man check-install check-systemd install uninstall release external-package-test
.PHONY: deb deb-deps check-static check-deb check-deps

all: build

deps:
	@scripts/deps.sh

build: deps gio
	$(SWIFT) build $(BUILD_FLAGS) 2>&1 | tee .build-log.txt
	@! grep -E ': warning:' .build-log.txt || (echo "build has warnings" >&2; exit 1)

# Each configuration is built once: the debug products with the test binary (one build: the
# tests reuse its modules; check-systemd runs part of the test binary under the service's
# sandbox) and the static release build, which has a scratch directory of its own, so that
# SwiftPM's lock on .build holds neither up. One make runs everything by its prerequisites, four
# jobs at a time, each printed when it ends: the two builds side by side, the checks that need
# no build at once, and each line of work as soon as its own build is done — the Swift tests as
# soon as the debug build is, while the release build goes on (it fills the time the tests
# spend waiting on namespaces, daemons and the estimator's clock). The release build and the
# outside package's build run niced: the debug build and the Swift tests, the longest line, get
# the cores first. The release binaries
# make the package and its checks; the outside package builds on the debug products.
test:
	@$(MAKE) --no-print-directory -j4 --output-sync=target RELEASE_NICE="nice -n 19" \
	  test-debug test-checks test-release external-package-test

# scripts/run-tests.sh prints how many tests were skipped, and as root fails when any was.
test-debug: build-tests
	REACHD_BIN_DIR=$$($(SWIFT) build --show-bin-path) SWIFT="$(SWIFT)" scripts/run-tests.sh --skip-build $(BUILD_FLAGS)

test-checks: check-deps check-units check-man check-install check-systemd check-gio-fuzz

test-release: check-static check-deb

build-tests: deps gio
	$(SWIFT) build --build-tests $(BUILD_FLAGS) 2>&1 | tee .build-log.txt
	@! grep -E ': warning:' .build-log.txt || (echo "build has warnings" >&2; exit 1)

# The GIO network monitor module (gio/, docs/glib.md): C on GLib and json-glib, no Swift.
# Warnings are errors; hardened as Debian builds (the package builds it with dpkg-buildflags).
CC ?= cc
GIO_MODULE = .build/gio/libgioreachd.so
GIO_CFLAGS ?= -O2 -g -fstack-protector-strong -D_FORTIFY_SOURCE=2
GIO_WARNINGS = -Wall -Wextra -Werror
GIO_LDFLAGS ?= -Wl,-z,relro -Wl,-z,now -Wl,--as-needed

# The protocol part (framing, replies, calls) is a file of its own, so that its tests
# (Tests/gio/protocol_tests.c) and the fuzz target (fuzz/targets/gio.c) use it without sockets.
# GIOHostileServerTests runs the two test programs in .build/gio-tests.
GIO_SOURCES = gio/gnetworkmonitorreachd.c gio/reachdprotocol.c
GIO_TESTS = .build/gio-tests/protocol-tests .build/gio-tests/setuid-probe
gio: deps $(GIO_MODULE) $(GIO_TESTS)

$(GIO_MODULE): $(GIO_SOURCES) gio/reachdprotocol.h | deps
	@mkdir -p $(dir $@)
	$(CC) $(GIO_CFLAGS) $(GIO_WARNINGS) -fPIC -fvisibility=hidden -shared -Wl,-z,defs $(GIO_LDFLAGS) \
	  -o $@ $(GIO_SOURCES) $$(pkg-config --cflags --libs gio-2.0 json-glib-1.0)

.build/gio-tests/protocol-tests: Tests/gio/protocol_tests.c gio/reachdprotocol.c gio/reachdprotocol.h | deps
	@mkdir -p $(dir $@)
	$(CC) $(GIO_CFLAGS) $(GIO_WARNINGS) -Igio -o $@ Tests/gio/protocol_tests.c gio/reachdprotocol.c \
	  $$(pkg-config --cflags --libs gio-2.0 json-glib-1.0)

.build/gio-tests/setuid-probe: Tests/gio/setuid_probe.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(GIO_CFLAGS) $(GIO_WARNINGS) -o $@ $< $$(pkg-config --cflags --libs gio-2.0)

# An outside package that depends on this one by path builds the README's Swift examples as
# shown and runs the first against a reachd in a test namespace (scratch build in .build/external-package).
external-package-test: build-tests
	@$(RELEASE_NICE) env SWIFT="$(SWIFT)" REACHD_BIN_DIR=$$($(SWIFT) build $(BUILD_FLAGS) --show-bin-path) Tests/ExternalPackage/run.sh

# Runs the daemon in the foreground; unprivileged it listens in $XDG_RUNTIME_DIR/reachd/.
run: build
	exec $$($(SWIFT) build $(BUILD_FLAGS) --show-bin-path)/reachd $(RUN_ARGS)

clean:
	rm -rf .build .build-log.txt

# --- Install ------------------------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=] [SYSCONFDIR=/etc] [BIN_DIR=already built binaries]
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
MANDIR ?= $(PREFIX)/share/man
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
# GLib's module directory: GLib looks nowhere else (GIO_EXTRA_MODULES aside), whatever PREFIX is.
GIOMODULEDIR ?= $(shell pkg-config --variable=giomoduledir gio-2.0 2>/dev/null)
INSTALL ?= install

# Release binaries for install, package and benchmarks: the Swift runtime (stdlib, Foundation,
# Dispatch) linked in, so that they run where no Swift toolchain is; no $$ORIGIN run path, and
# symbols bound at start (read-only relocations, as Debian hardens its binaries).
# Relative relocations packed (RELR, glibc 2.36), and no symbol exported that no library looks up.
# Installing strips them (install.sh, dh_strip); the ones in .build keep their symbols.
RELEASE_FLAGS ?= -c release --scratch-path $(CURDIR)/.build/static --static-swift-stdlib --disable-local-rpath \
	-Xswiftc -use-ld=lld \
	-Xlinker -z -Xlinker now -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic
RELEASE_BIN_DIR = $$($(SWIFT) build $(RELEASE_FLAGS) $(BUILD_FLAGS) --show-bin-path)
RELEASE_NICE ?=
release: deps
	$(RELEASE_NICE) $(SWIFT) build $(RELEASE_FLAGS) $(BUILD_FLAGS) --product reachd
	$(RELEASE_NICE) $(SWIFT) build $(RELEASE_FLAGS) $(BUILD_FLAGS) --product reachctl
	$(RELEASE_NICE) $(SWIFT) build $(RELEASE_FLAGS) $(BUILD_FLAGS) --product reachd-dispatcher

# scripts/deps.sh as on a fresh machine (dpkg knows nothing, apt-get recorded; root and not).
check-deps:
	@scripts/test-deps.sh

check-units:
	@scripts/check-units.sh

# The man pages: mandoc's linter, and no paragraph rendered as one run-together word.
check-man:
	@scripts/check-man.sh

check-install: build-tests
	@scripts/test-install.sh

# Boots systemd in a container and runs reachd under it (root; skips otherwise, never as root);
# then, in a second one, the dispatcher, its targets and reachd-wait-online.
check-systemd: build-tests
	@REACHD_BIN_DIR=$$($(SWIFT) build --show-bin-path) scripts/test-systemd.sh
	@REACHD_BIN_DIR=$$($(SWIFT) build --show-bin-path) scripts/test-dispatcher-systemd.sh

# Without BIN_DIR, builds release binaries first. Installed binaries are stripped. The GIO
# module goes into GIOMODULEDIR, and GIO's module cache is refreshed unless DESTDIR is set.
install: $(if $(BIN_DIR),,release) gio
	@scripts/install.sh install "$(if $(BIN_DIR),$(BIN_DIR),$(RELEASE_BIN_DIR))" \
	  "$(DESTDIR)" "$(PREFIX)" "$(SYSCONFDIR)" "$(UNITDIR)" "$(MANDIR)" "$(COMPLETIONDIR)" "$(SYSUSERSDIR)" "$(GIOMODULEDIR)"

# Leaves an edited $(SYSCONFDIR)/reachd/reachd.conf (and any drop-ins) in place.
uninstall:
	@scripts/install.sh uninstall "" "$(DESTDIR)" "$(PREFIX)" "$(SYSCONFDIR)" "$(UNITDIR)" "$(MANDIR)" "$(COMPLETIONDIR)" "$(SYSUSERSDIR)" "$(GIOMODULEDIR)"

# The release binaries, installed into a DESTDIR, run with the Swift toolchain hidden (root:
# a mount namespace binds an empty directory over it; skips otherwise).
check-static: release
	@scripts/test-static.sh "$(RELEASE_BIN_DIR)"

# --- Debian package -------------------------------------------------------------------------
# make deb [DEB_REVISION=1]: reachd_VERSION-REVISION_ARCH.deb in this directory, lintian-clean.
DEB_REVISION ?= 1
deb-deps: deps
	@scripts/deps.sh deb

deb: deb-deps release
	@DEB_REVISION="$(DEB_REVISION)" scripts/build-deb.sh "$(RELEASE_BIN_DIR)"

# Installs, reloads, upgrades, removes and purges the package under systemd in a container
# with the Swift toolchain hidden (root; skips otherwise). Builds the package first.
check-deb: deb
	@scripts/test-deb.sh "reachd_$$(scripts/build-deb.sh --version)-$(DEB_REVISION)_$$(dpkg-architecture -qDEB_HOST_ARCH).deb" "$(RELEASE_BIN_DIR)"

# Benchmarks: on demand only, never part of `make test`. Root, ~2.5 minutes on 2 cores.
# Builds reachd in release mode and writes the figures into BENCHMARKS.md; then bench/gio.py.
BENCH_ARGS ?=
bench: release gio
	bench/run.sh --reachd $(RELEASE_BIN_DIR)/reachd $(BENCH_ARGS)

# Fuzzing (on demand): libFuzzer targets for the varlink framer and decoder, the configuration
# loader, the HTTP response parser, the ModemManager model, the netlink decoder, router
# advertisement options, captive-portal API answers and the GIO module's reply handling (gio,
# C), FUZZ_SECONDS each. Inputs that crash land in fuzz/regressions/, which `make test` replays;
# `make test` also fuzzes the gio target for a few seconds (check-gio-fuzz: C builds in seconds).
FUZZ_SECONDS ?= 60
fuzz: deps
	@scripts/deps.sh fuzz
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run.sh

check-gio-fuzz: deps
	@scripts/deps.sh fuzz
	@FUZZ_TARGETS=gio FUZZ_SECONDS=$(GIO_FUZZ_SECONDS) fuzz/run.sh
GIO_FUZZ_SECONDS ?= 5
