# pinpoint: `make demo` and `make test` work as root on a fresh Debian 12 machine.
# `make build`, `make package` and `make install` install only what building needs
# (scripts/install-deps.sh build); `make test` and the other test targets also install what the
# tests need (install-deps.sh test: GoogleTest, clang, Slurm, munge, promtool, systemd-analyze).
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)
FUZZ_RUNS  ?= 20000
FUZZERS    := $(basename $(notdir $(wildcard fuzz/*_fuzz.cc)))
PREFIX     ?= /usr/local
DESTDIR    ?=
CONFIGURE  := cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPINPOINT_WERROR=ON

.PHONY: all deps test-deps build build-tests demo test unit asan asan-build asan-tests fuzz run-fuzzers bench package install clean

all: build

deps:
	@scripts/install-deps.sh build

test-deps:
	@scripts/install-deps.sh test

build: deps
	@$(CONFIGURE) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The build with its tests, whatever an earlier `make build` chose.
build-tests: test-deps
	@$(CONFIGURE) -DPINPOINT_TESTS=ON -DPINPOINT_K8S=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# A Debian package of this build: $(BUILD)/packages/pinpoint_VERSION_ARCH.deb (docs/admin.md).
package: build
	@cmake --build $(BUILD) --target package

# For sites without packages: the same files under $(DESTDIR)$(PREFIX) (docs/admin.md).
install: build
	@DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix $(PREFIX)

# The demonstration: a mixed batch on this node (simulated when it has no NVIDIA GPU), then how to
# run a pinpointd of one's own.
demo: build
	@$(BUILD)/pinpoint-demo --bin-dir $(BUILD) --state-dir $(CURDIR)/$(BUILD)/demo-state

# Every CPU test: unit and integration tests, the same under ASan+UBSan, and a fuzz smoke run.
test: build-tests
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory asan

unit: build-tests
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# One sanitizer tree, built once by clang, serves the ASan+UBSan tests and a smoke run of every
# fuzz target (docs/build-time.md). The live suites (a real Slurm, podman) ran in the main build
# and are not run again here.
asan: asan-build
	@$(MAKE) --no-print-directory asan-tests
	@$(MAKE) --no-print-directory run-fuzzers FUZZ_BUILD=$(ASAN_BUILD)

asan-tests:
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -LE live

asan-build: test-deps
	@grep -qs 'CMAKE_CXX_COMPILER:.*clang' $(ASAN_BUILD)/CMakeCache.txt || rm -rf $(ASAN_BUILD)
	@CC=clang CXX=clang++ cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DPINPOINT_SANITIZE=ON -DPINPOINT_FUZZ=ON -DPINPOINT_WERROR=ON -DPINPOINT_BENCH=OFF \
	  -DPINPOINT_TESTS=ON -DPINPOINT_K8S=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

# The fuzz targets alone, optimised (-O1) for long runs by hand (docs/security.md), and their
# smoke run.
fuzz: test-deps
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DPINPOINT_FUZZ=ON -DPINPOINT_TESTS=OFF -DPINPOINT_BENCH=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(FUZZERS)
	@$(MAKE) --no-print-directory run-fuzzers

# Every fuzz target of $(FUZZ_BUILD) for $(FUZZ_RUNS) runs in all, split over $(JOBS) workers of
# their own seeds that share the target's corpus directory (libFuzzer reloads it each second, so
# each worker builds on what the others found): service_fuzz alone takes most of the time, and
# one process of it would keep one core busy while the other idles (docs/build-time.md).
run-fuzzers:
	@for f in $(FUZZERS); do w=1; while [ $$w -le $(JOBS) ]; do echo "$$f $$w"; w=$$((w+1)); done; done | \
	  xargs -P $(JOBS) -n 2 sh -c '\
	  [ "$$2" = 1 ] && echo "fuzz: $$1 ($(FUZZ_RUNS) runs over $(JOBS) workers)"; \
	  mkdir -p $(FUZZ_BUILD)/corpus-$$1; \
	  $(FUZZ_BUILD)/$$1 -runs=$$(( ($(FUZZ_RUNS) + $(JOBS) - 1) / $(JOBS) )) -seed=$$2 \
	    -artifact_prefix=$(FUZZ_BUILD)/$$1-$$2- \
	    $(FUZZ_BUILD)/corpus-$$1 fuzz/corpus/$$1 >/dev/null 2>$(FUZZ_BUILD)/$$1.$$2.log \
	    || { tail -40 $(FUZZ_BUILD)/$$1.$$2.log; echo "fuzz: $$1 (worker $$2) failed"; exit 1; }' sh

bench: build
	@$(BUILD)/sched_bench --out bench/results/sched.md
	@$(BUILD)/placement_bench --out bench/results/placement.md
	@$(BUILD)/latency_bench --bin-dir $(BUILD) --out bench/results/latency.md
	@$(BUILD)/queue_bench --bin-dir $(BUILD) --out bench/results/queue.md

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
