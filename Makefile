# The two commands of the README's quick start. Both install what is missing first.
#   make demo   build everything and run the main job on a bundled example
#   make test   build everything and run every test through ctest but the slow ones
#               (label slow: make test TESTS=full runs them too; docs/testing.md)
PRESET ?= default
TESTS ?= $(PRESET)
BUILD_DIR := $(if $(filter asan,$(PRESET)),build-asan,build)

.PHONY: all deps configure build demo test format tidy clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@test -f $(BUILD_DIR)/build.ninja || cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build --preset $(PRESET)

demo: build
	@scripts/demo.sh $(BUILD_DIR)

test: build
	@ctest --preset $(TESTS)

format:
	@git ls-files --cached --others --exclude-standard '*.h' '*.cpp' '*.cu' '*.cuh' | grep -v '^tests/.*/kernels/' | grep -v '^examples/demo/rewritten/' | grep -v '^tests/rewrite/golden/' | xargs clang-format-19 -i

tidy: configure
	@git ls-files --cached --others --exclude-standard '*.cpp' | grep -v '^tests/.*/kernels/' | xargs clang-tidy-19 -p $(BUILD_DIR) --quiet

clean:
	@rm -rf build build-asan
