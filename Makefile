# reachd — build, test, run, install.
SWIFT ?= swift
PREFIX ?= /usr/local
DESTDIR ?=
BUILD_FLAGS ?=

.PHONY: all build deps test run clean bench

all: build

deps:
	@scripts/deps.sh

build: deps
	$(SWIFT) build $(BUILD_FLAGS) 2>&1 | tee .build-log.txt
	@! grep -E ': warning:' .build-log.txt || (echo "build has warnings" >&2; exit 1)

test: build
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	REACHD_BIN_DIR=$$($(SWIFT) build --show-bin-path) $(SWIFT) test --skip-build $(BUILD_FLAGS)

# Runs the daemon in the foreground; unprivileged it listens in $XDG_RUNTIME_DIR/reachd/.
run: build
	exec $$($(SWIFT) build $(BUILD_FLAGS) --show-bin-path)/reachd $(RUN_ARGS)

clean:
	rm -rf .build .build-log.txt
