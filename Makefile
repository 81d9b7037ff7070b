# The two commands of the README: `make demo` and `make test`. Both install
# what is missing, configure and build first.
BUILD ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps test-deps configure build demo image install test bench format format-check asan clean

all: build

deps:
	@tools/install-deps.sh

# What the tests run besides the build: clang-format, nginx, Prometheus,
# grpcio, Node.js with the schema validator and the OpenAI SDK, Chromium,
# mmdebstrap and umoci
# (the image), kubectl where none is installed (the install's renders).
test-deps:
	@tools/install-deps.sh --test

# A new build tree uses Ninja (it starts a file as soon as what it needs is
# built, where make waits for whole targets); one configured before keeps
# its generator.
GENERATOR = $(if $(wildcard $(BUILD)/CMakeCache.txt),,-G Ninja)

configure: deps
	@cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The demo builds the one program it runs, not the tests.
demo: configure
	@cmake --build $(BUILD) -j $(JOBS) --target migserve
	$(BUILD)/migserve compare -w data/workloads/normal-1.yaml -p data/profiles/a100-80gb.csv --time-limit 20
	@mkdir -p $(BUILD)/demo
	$(BUILD)/migserve optimize -w data/workloads/normal-1.yaml -p data/profiles/a100-80gb.csv --algo milp -o $(BUILD)/demo/normal-1.json
	$(BUILD)/migserve report -d $(BUILD)/demo/normal-1.json -w data/workloads/normal-1.yaml -p data/profiles/a100-80gb.csv --title "normal-1: the optimal deployment" -o $(BUILD)/demo/report.html
	@echo "demo: the deployment's report is $(BUILD)/demo/report.html (open it in a browser)"

# The container image from Debian packages (tools/make-image.sh), for
# linux/amd64 and linux/arm64 (migserve cross-compiled in $(BUILD)/arm64,
# tools/build-arm64.sh): $(BUILD)/image/migserve.oci.tar, its digest (the
# index's), its package list and its SBOM (sbom.spdx.json).
image: configure
	@tools/install-deps.sh --image
	@cmake --build $(BUILD) -j $(JOBS) --target migserve
	tools/build-arm64.sh $(BUILD)/arm64 >/dev/null
	tools/make-image.sh $(BUILD)/migserve $(BUILD)/image $(BUILD)/arm64/build/migserve

# Pushes the image to REGISTRY and installs migserve with OVERLAY on the
# current kubectl context (tools/install.sh; docs/kubernetes.md, "Install").
OVERLAY ?= gpu-operator
NAMESPACE ?=
install: image
	tools/install.sh --registry $(REGISTRY) --overlay $(OVERLAY) \
	  $(if $(NAMESPACE),--namespace $(NAMESPACE))

# Twice as many tests at once as cores: the long ones mostly wait (on
# Prometheus' scrapes, a compressed day of traffic, nginx), and the ones
# that measure latencies run alone (RUN_SERIAL). docs/benchmarks.md, "Build
# and test times".
TEST_JOBS ?= $(shell echo $$(( 2 * $(JOBS) )))

# Scratch files in memory where the machine has /dev/shm: the controller's
# journal fsyncs every write, which on a disk was most of the time of the
# tests that reopen it (docs/benchmarks.md, "Build and test times").
TEST_TMPDIR ?= $(shell test -d /dev/shm -a -w /dev/shm && echo /dev/shm)

test: test-deps build
	cd $(BUILD) && $(if $(TEST_TMPDIR),TMPDIR=$(TEST_TMPDIR)) ctest --output-on-failure -j $(TEST_JOBS)

bench: build
	$(BUILD)/migserve_bench

# Built with clang: it compiles the sanitized tree in 11 minutes where GCC
# takes 15 on 2 cores, and checks the mutex annotations (-Wthread-safety)
# of every file on the way (docs/benchmarks.md, "Build and test times");
# a tree another compiler configured starts over.
# Leaks inside third-party libraries are suppressed (tools/lsan.supp says
# which and why). The sanitized tests run one per core: what slows them is
# CPU time.
asan:
	@tools/install-deps.sh --clang
	@grep -qs 'CMAKE_CXX_COMPILER:.*clang' build-asan/CMakeCache.txt || rm -rf build-asan
	LSAN_OPTIONS=suppressions=$(CURDIR)/tools/lsan.supp \
	  $(MAKE) test BUILD=build-asan BUILD_TYPE=Debug TEST_JOBS=$(JOBS) \
	  CMAKE_FLAGS="-DMIGSERVE_SANITIZE=ON -DCMAKE_CXX_COMPILER=clang++"

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

format-check: test-deps
	clang-format --dry-run --Werror $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD) build-asan
