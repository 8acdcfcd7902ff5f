# Tessera: OpenMP target regions offloaded to FPGAs.
#   make bench  — set up, build, run `tessera bench` on the paper's 10 stencils at paper
#                 sizes on the emulated device (table, target/bench/bench.{json,svg})
#   make examples — the self-checking examples, printing what ran where
#   make test   — set up, build, run every test
#   make install PREFIX=<dir> — build, then install relocatably into <dir> (default
#                 /usr/local): bin/tessera, lib/{libtessera_rt.so,tessera_plugin.so},
#                 include/tessera/, share/tessera/hls-headers/, lib/cmake/Tessera/
#                 (make install-only, or INSTALL_NOBUILD=1: install what is built)
#   make fuzz   — differential fuzzing of the data environment with many generated
#                 programs (FUZZ_COUNT, FUZZ_SEED, FUZZ_FEATURES, FUZZ_JOBS; failing
#                 programs are kept in target/fuzz/)
# One cargo target directory (target/) serves the CLI, the runtime and the plugin's
# staticlib, so the Rust side is built once.

# munge, slurmctld, slurmd, slurm-client: the single-node Slurm cluster tests/dse.rs
# starts to test `tessera dse --slurm` (nothing else needs them).
DEB_PACKAGES := clang-19 libclang-19-dev llvm-19-dev libomp-19-dev cmake make g++ \
                autoconf automake libtool munge slurmctld slurmd slurm-client
CARGO ?= cargo
TARGET := $(CURDIR)/target
RELEASE := $(TARGET)/release
PLUGIN_BUILD := $(CURDIR)/build/plugin
# `make build TESSERA_FEATURES=xrt` builds the runtime's XRT backend (needs XILINX_XRT;
# see runtime/README.md); `TESSERA_FEATURES=tapasco` its TaPaSCo backend (needs
# TaPaSCo's runtime: TAPASCO_PREFIX or a TaPaSCo workspace; see bitstreams/README.md).
TESSERA_FEATURES ?=
CARGO_FEATURES := $(if $(TESSERA_FEATURES),--features tessera-rt/$(TESSERA_FEATURES))

.PHONY: all setup hls-headers build install install-only test fuzz corpus bench examples clean

all: build

setup:
	@scripts/setup.sh $(DEB_PACKAGES)

# Xilinx's ap_int/ap_fixed/hls_stream headers from the PyPI package hls4ml (never
# committed): generated wide-port kernels compile against the vendor's own types.
hls-headers:
	scripts/fetch-hls-headers.sh

build: setup hls-headers
	$(CARGO) build --release --workspace $(CARGO_FEATURES)
	cmake -S plugin -B $(PLUGIN_BUILD) -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_C_COMPILER=clang-19 \
	  -DTESSERA_CARGO_TARGET_DIR=$(TARGET) >/dev/null
	cmake --build $(PLUGIN_BUILD)
	cp $(PLUGIN_BUILD)/tessera_plugin.so $(RELEASE)/tessera_plugin.so

# Relocatable install (scripts/install.sh lists the files); find_package(Tessera CONFIG)
# with -DCMAKE_PREFIX_PATH=$(PREFIX) then gives tessera_add_fpga_executable().
PREFIX ?= /usr/local
INSTALL_NOBUILD ?=
install: $(if $(INSTALL_NOBUILD),,build)
	scripts/install.sh '$(DESTDIR)$(PREFIX)'

install-only:
	scripts/install.sh '$(DESTDIR)$(PREFIX)'

test: build
	$(CARGO) test --release --workspace $(CARGO_FEATURES)

# Random OpenMP programs around target data / enter / exit / update, present data,
# host fallbacks in data regions and regions from two host threads, built with plain
# clang and with tessera cc and compared (tests/fuzz_data.rs; `make test` runs a fixed
# small seed set). Every failing program is kept in $(FUZZ_DIR)/case_<seed>/ with both
# outputs, a shrunk version and repro.sh; summary.txt lists the failure classes.
# FUZZ_FEATURES: e.g. -threads,-fb-if (see tests/datagen/mod.rs, Feat); FUZZ_CASES:
# re-run exactly these case seeds; FUZZ_FLAGS: extra tessera cc options, e.g.
# -fplugin-arg-tessera-banks=2.
FUZZ_COUNT ?= 2000
FUZZ_SEED ?= 1
FUZZ_JOBS ?= 2
FUZZ_FEATURES ?=
FUZZ_CASES ?=
FUZZ_MINIMIZE ?= 12
FUZZ_FLAGS ?=
FUZZ_DIR ?= $(TARGET)/fuzz
fuzz: build
	TESSERA_FUZZ_COUNT=$(FUZZ_COUNT) TESSERA_FUZZ_SEED=$(FUZZ_SEED) TESSERA_FUZZ_JOBS=$(FUZZ_JOBS) \
	TESSERA_FUZZ_FEATURES='$(FUZZ_FEATURES)' TESSERA_FUZZ_CASES='$(FUZZ_CASES)' \
	TESSERA_FUZZ_MINIMIZE=$(FUZZ_MINIMIZE) TESSERA_FUZZ_DIR=$(FUZZ_DIR) TESSERA_FUZZ_FLAGS='$(FUZZ_FLAGS)' \
	  $(CARGO) test --release -p tessera-tests --test fuzz_data -- --ignored --nocapture fuzz_many

# Offload figures of the program corpus (tests/programs/): regions on the device, tiled
# vs baseline kernels, and the reasons, written to docs/corpus.md (tests/corpus.rs).
corpus: build
	$(CARGO) test --release -p tessera-tests --test corpus -- --ignored --nocapture

# The main job: the paper's 10 stencils at paper sizes (64 MiB per array), built with
# Tessera, run on the emulated device, checked bit for bit; exact counts, modelled
# FPGA times and measured times in a table, target/bench/bench.json and bench.svg.
BENCH_MODE ?= dataflow
# The mode shown beside it (table, JSON `compare`, SVG side by side).
BENCH_COMPARE ?= tessera
bench: build
	mkdir -p target/bench
	$(RELEASE)/tessera bench --size paper --mode $(BENCH_MODE) --compare $(BENCH_COMPARE) \
	  --json target/bench/bench.json --svg target/bench/bench.svg

# The self-checking examples in examples/, with where each region ran.
examples: build
	scripts/run-examples.sh

clean:
	rm -rf $(TARGET) build
