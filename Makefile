# reachd — build, test, run, install.
SWIFT ?= swift
PREFIX ?= /usr/local
DESTDIR ?=
BUILD_FLAGS ?=

.PHONY: all build build-tests deps test run clean bench fuzz check-units check-install check-systemd install uninstall release external-package-test
.PHONY: deb deb-deps check-static check-deb link-order

all: build

deps:
	@scripts/deps.sh

build: deps
	$(SWIFT) build $(BUILD_FLAGS) 2>&1 | tee .build-log.txt
	@! grep -E ': warning:' .build-log.txt || (echo "build has warnings" >&2; exit 1)

# The test binary is built first: check-systemd runs part of it under the service's sandbox.
# scripts/run-tests.sh prints how many tests were skipped, and as root fails when any was.
test: build build-tests check-units check-install check-systemd check-static check-deb
	REACHD_BIN_DIR=$$($(SWIFT) build --show-bin-path) SWIFT="$(SWIFT)" scripts/run-tests.sh --skip-build $(BUILD_FLAGS)
	$(MAKE) external-package-test

build-tests: deps
	$(SWIFT) build --build-tests $(BUILD_FLAGS)

# An outside package that depends on this one by path builds the README's Swift snippet and
# runs it against a reachd in a test namespace (scratch build in .build/external-package).
external-package-test: build
	@SWIFT="$(SWIFT)" REACHD_BIN_DIR=$$($(SWIFT) build $(BUILD_FLAGS) --show-bin-path) Tests/ExternalPackage/run.sh

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
INSTALL ?= install

# Release binaries for install, package and benchmarks: the Swift runtime (stdlib, Foundation,
# Dispatch) linked in, so that they run where no Swift toolchain is; no $$ORIGIN run path, and
# symbols bound at start (read-only relocations, as Debian hardens its binaries).
# For a small resident set: each function in a section of its own, laid out by lld in the order
# of scripts/reachd.order (the functions a running reachd executes; `make link-order` writes
# it), relative relocations packed (RELR, glibc 2.36), and no symbol exported that no library
# looks up. BENCHMARKS.md says what each saves.
# Exclusivity is enforced at compile time only: one serial queue owns every mutable state, and
# the run-time checks cost each event thousands of instructions (debug builds and tests keep them).
# Installing strips them (install.sh, dh_strip); the ones in .build keep their symbols.
LINK_ORDER = $(CURDIR)/scripts/reachd.order
RELEASE_FLAGS ?= -c release --static-swift-stdlib --disable-local-rpath \
	-Xswiftc -Xfrontend -Xswiftc -function-sections -Xswiftc -use-ld=lld -Xswiftc -enforce-exclusivity=unchecked \
	-Xlinker -z -Xlinker now -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic \
	-Xlinker --symbol-ordering-file=$(LINK_ORDER) -Xlinker --no-warn-symbol-ordering
RELEASE_BIN_DIR = $$($(SWIFT) build $(RELEASE_FLAGS) $(BUILD_FLAGS) --show-bin-path)
release: deps
	@# SwiftPM does not know the order file is an input of the link: relink when it is newer.
	@bin=$(RELEASE_BIN_DIR); for b in reachd reachctl; do if [ "$(LINK_ORDER)" -nt "$$bin/$$b" ]; then rm -f "$$bin/$$b"; fi; done
	$(SWIFT) build $(RELEASE_FLAGS) $(BUILD_FLAGS) --product reachd
	$(SWIFT) build $(RELEASE_FLAGS) $(BUILD_FLAGS) --product reachctl

check-units:
	@scripts/check-units.sh

check-install:
	@scripts/test-install.sh

# Boots systemd in a container and runs reachd under it (root; skips otherwise, never as root).
check-systemd: build-tests
	@REACHD_BIN_DIR=$$($(SWIFT) build --show-bin-path) scripts/test-systemd.sh

# Without BIN_DIR, builds release binaries first. Installed binaries are stripped.
install: $(if $(BIN_DIR),,release)
	@scripts/install.sh install "$(if $(BIN_DIR),$(BIN_DIR),$(RELEASE_BIN_DIR))" \
	  "$(DESTDIR)" "$(PREFIX)" "$(SYSCONFDIR)" "$(UNITDIR)" "$(MANDIR)" "$(COMPLETIONDIR)" "$(SYSUSERSDIR)"

# Leaves an edited $(SYSCONFDIR)/reachd/reachd.conf (and any drop-ins) in place.
uninstall:
	@scripts/install.sh uninstall "" "$(DESTDIR)" "$(PREFIX)" "$(SYSCONFDIR)" "$(UNITDIR)" "$(MANDIR)" "$(COMPLETIONDIR)" "$(SYSUSERSDIR)"

# The release binaries, installed into a DESTDIR, run with the Swift toolchain hidden (root:
# a mount namespace binds an empty directory over it; skips otherwise).
check-static: release
	@scripts/test-static.sh "$(RELEASE_BIN_DIR)"

# --- Debian package -------------------------------------------------------------------------
# make deb [DEB_REVISION=1]: reachd_VERSION-REVISION_ARCH.deb in this directory, lintian-clean.
DEB_REVISION ?= 1
deb-deps:
	@scripts/deps.sh deb

deb: deb-deps release
	@DEB_REVISION="$(DEB_REVISION)" scripts/build-deb.sh "$(RELEASE_BIN_DIR)"

# Installs, reloads, upgrades, removes and purges the package under systemd in a container
# with the Swift toolchain hidden (root; skips otherwise). Builds the package first.
check-deb: deb
	@scripts/test-deb.sh "reachd_$$(scripts/build-deb.sh --version)-$(DEB_REVISION)_$$(dpkg-architecture -qDEB_HOST_ARCH).deb" "$(RELEASE_BIN_DIR)"

# Rewrites scripts/reachd.order from a profile of the release reachd (valgrind; root, ~1 minute).
# On demand, after changes to what reachd runs; then `make release` links with the new order.
link-order: release
	scripts/link-order.sh

# Benchmarks: on demand only, never part of `make test`. Root, ~2.5 minutes on 2 cores.
# Builds reachd in release mode and writes the figures into BENCHMARKS.md.
BENCH_ARGS ?=
bench: release
	bench/run.sh --reachd $$($(SWIFT) build -c release --show-bin-path)/reachd $(BENCH_ARGS)

# Fuzzing (on demand, never part of `make test`): libFuzzer targets for the varlink framer and
# decoder, the configuration loader, the HTTP response parser, the ModemManager model, the
# netlink decoder, router advertisement options and captive-portal API answers, FUZZ_SECONDS each. Inputs that crash land in fuzz/regressions/, which
# `make test` replays.
FUZZ_SECONDS ?= 60
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run.sh
