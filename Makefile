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

run: build
	$$($(SWIFT) build --show-bin-path)/reachd $(RUN_ARGS)

clean:
	rm -rf .build .build-log.txt

# Benchmarks (issue 8): on demand only, never part of `make test`. Root, ~6 minutes, 2 cores.
# Builds reachd in release mode and writes the figures into BENCHMARKS.md.
BENCH_ARGS ?=
bench: deps
	$(SWIFT) build -c release $(BUILD_FLAGS)
	bench/run.sh --reachd $$($(SWIFT) build -c release --show-bin-path)/reachd $(BENCH_ARGS)
