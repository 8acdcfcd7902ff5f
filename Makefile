# Tessera: OpenMP target regions offloaded to FPGAs.
#   make bench  — set up, build, compile the examples with Tessera and run them on
#                 the emulated device, printing what ran where
#   make test   — set up, build, run every test
# One cargo target directory (target/) serves the CLI, the runtime and the plugin's
# staticlib, so the Rust side is built once.

DEB_PACKAGES := clang-19 libclang-19-dev llvm-19-dev libomp-19-dev cmake make g++ \
                autoconf automake libtool
CARGO ?= cargo
TARGET := $(CURDIR)/target
RELEASE := $(TARGET)/release
PLUGIN_BUILD := $(CURDIR)/build/plugin

.PHONY: all setup hls-headers build test bench clean

all: build

setup:
	@scripts/setup.sh $(DEB_PACKAGES)

# Xilinx's ap_int/ap_fixed/hls_stream headers from the PyPI package hls4ml (never
# committed): generated wide-port kernels compile against the vendor's own types.
hls-headers:
	scripts/fetch-hls-headers.sh

build: setup hls-headers
	$(CARGO) build --release --workspace
	cmake -S plugin -B $(PLUGIN_BUILD) -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_C_COMPILER=clang-19 \
	  -DTESSERA_CARGO_TARGET_DIR=$(TARGET) >/dev/null
	cmake --build $(PLUGIN_BUILD)
	cp $(PLUGIN_BUILD)/tessera_plugin.so $(RELEASE)/tessera_plugin.so

test: build
	$(CARGO) test --release --workspace

bench: build
	scripts/run-examples.sh

clean:
	rm -rf $(TARGET) build
