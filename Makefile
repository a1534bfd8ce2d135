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

.PHONY: all deps test-deps build build-tests demo test unit asan fuzz bench package install clean

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

# The main job: a mixed batch on this node (simulated when it has no NVIDIA GPU).
demo: build
	@$(BUILD)/pinpoint-demo --bin-dir $(BUILD) --state-dir $(CURDIR)/$(BUILD)/demo-state

# Every CPU test: unit and integration tests, the same under ASan+UBSan, and a fuzz smoke run.
test: build-tests
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory asan fuzz

unit: build-tests
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

asan: test-deps
	@cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPINPOINT_SANITIZE=ON \
	  -DPINPOINT_WERROR=ON -DPINPOINT_BENCH=OFF -DPINPOINT_TESTS=ON -DPINPOINT_K8S=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

fuzz: test-deps
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DPINPOINT_FUZZ=ON -DPINPOINT_TESTS=OFF -DPINPOINT_BENCH=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(FUZZERS)
	@for name in $(FUZZERS); do \
	  echo "fuzz: $$name ($(FUZZ_RUNS) runs)"; \
	  mkdir -p $(FUZZ_BUILD)/corpus-$$name; \
	  $(FUZZ_BUILD)/$$name -runs=$(FUZZ_RUNS) -seed=1 -artifact_prefix=$(FUZZ_BUILD)/ \
	    $(FUZZ_BUILD)/corpus-$$name fuzz/corpus/$$name >/dev/null 2>$(FUZZ_BUILD)/$$name.log \
	    || { tail -40 $(FUZZ_BUILD)/$$name.log; exit 1; }; \
	done

bench: build
	@$(BUILD)/sched_bench --out bench/results/sched.md
	@$(BUILD)/placement_bench --out bench/results/placement.md
	@$(BUILD)/latency_bench --bin-dir $(BUILD) --out bench/results/latency.md
	@$(BUILD)/queue_bench --bin-dir $(BUILD) --out bench/results/queue.md

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
