# Convenience targets over CMake/Ninja (the real build is CMakeLists.txt).
BUILD ?= build

all:
	bash scripts/build.sh $(BUILD)

test:
	bash scripts/test.sh

demo:
	bash scripts/demo.sh

bench: all
	bash bench/run.sh $(BUILD)

clean:
	rm -rf build build-asan build-tsan build-fuzz

.PHONY: all test demo bench clean
