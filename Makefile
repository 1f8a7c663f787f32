# coroscope -- see README.md.  `make` builds ./coroscope, `make check` runs
# every test (and the sanitizer build), `make demo` shows the tool on a
# bundled demo program.  Missing Debian packages are installed with apt-get.

CC ?= cc
PREFIX ?= /usr/local
SANITIZE ?=

WARN = -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes \
       -Wmissing-prototypes -Wvla -Wno-unused-parameter -Werror
CFLAGS ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -I. -MMD -MP
LDLIBS = -lelf -ldw -lunwind-x86_64

ifneq ($(SANITIZE),)
BUILD = build/san
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
BIN = $(BUILD)/coroscope
else
BUILD = build/obj
BIN = coroscope
endif

LIB_SRCS = $(wildcard common/*.c attach/*.c symbols/*.c readers/*.c)
CLI_SRCS = $(wildcard cli/*.c)
LIB_OBJS = $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS = $(CLI_SRCS:%.c=$(BUILD)/%.o)
UNIT_SRCS = $(wildcard tests/unit/*.c)
UNIT_BINS = $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

# Debian packages the build and the tests need (`make deps` installs them).
# libc6-dbg: libc's names for tests/test_native.py, which compares with gdb.
BUILD_PKGS = gcc make libelf-dev libdw-dev libunwind-dev
TEST_PKGS = python3 python3-pytest python3-pyelftools gdb python3-uvloop clang \
	libc6-dbg

.PHONY: all check check-unit check-functional check-sanitize demo bench \
	deps deps-build install clean fuzz

all: deps-build $(BIN)

$(BIN): $(CLI_OBJS) $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) $(LDLIBS)

-include $(shell find build -name '*.d' 2>/dev/null)

# Install what is missing, quietly; a no-op on a machine that has it all.
deps-build:
	@tools/ensure-packages $(BUILD_PKGS)

deps: deps-build
	@tools/ensure-packages $(TEST_PKGS)

unit: $(UNIT_BINS)

check: deps
	$(MAKE) $(BIN) unit
	tools/run-unit $(BUILD)/tests
	COROSCOPE=$(abspath $(BIN)) /usr/bin/python3 -m pytest -q tests
	$(MAKE) check-sanitize
	@if command -v $(FUZZ_CC) >/dev/null; then $(MAKE) fuzz FUZZ_TIME=15; \
	else echo "fuzz: skipped, $(FUZZ_CC) is not installed"; fi

# The same functional tests against the sanitizer build.
check-sanitize:
	$(MAKE) SANITIZE=address,undefined build/san/coroscope unit
	ASAN_OPTIONS=detect_leaks=1 tools/run-unit build/san/tests
	COROSCOPE=$(abspath build/san/coroscope) COROSCOPE_SANITIZED=1 \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		/usr/bin/python3 -m pytest -q -m 'not slow' tests

# libFuzzer harnesses: each tests/fuzz/fuzz_NAME.c is linked with the
# library built for fuzzing and runs FUZZ_TIME seconds on a copy of
# tests/fuzz/corpus/NAME (libFuzzer adds inputs to its corpus directory;
# the checked-in seeds must stay small).  Logs: build/fuzz/NAME.log.
FUZZ_CC ?= clang
FUZZ_TIME ?= 20
FUZZ_FLAGS = -std=c11 -D_GNU_SOURCE -g -O1 -I. -MMD -MP -fno-omit-frame-pointer
FUZZ_SRCS = $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS = $(FUZZ_SRCS:tests/fuzz/%.c=build/fuzz/%)
FUZZ_LIB_OBJS = $(LIB_SRCS:%.c=build/fuzz/obj/%.o)

# Keep the objects between runs (make would delete them as intermediate).
.SECONDARY: $(FUZZ_LIB_OBJS)

build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,address,undefined -c -o $@ $<

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -o $@ $(filter %.c %.o,$^) $(LDLIBS)

fuzz: deps-build $(FUZZ_BINS)
	@set -e; for bin in $(FUZZ_BINS); do \
		name=$${bin#build/fuzz/fuzz_}; work=build/fuzz/corpus/$$name; \
		rm -rf $$work; mkdir -p $$work; \
		cp tests/fuzz/corpus/$$name/* $$work/ 2>/dev/null || true; \
		echo "fuzz $$name: $(FUZZ_TIME) s on a copy of tests/fuzz/corpus/$$name"; \
		$$bin -max_total_time=$(FUZZ_TIME) -max_len=65536 -timeout=10 \
			-rss_limit_mb=2048 -artifact_prefix=build/fuzz/$$name- \
			$$work >build/fuzz/$$name.log 2>&1 || \
			{ tail -40 build/fuzz/$$name.log; \
			  echo "fuzz $$name failed: see build/fuzz/$$name.log"; exit 1; }; \
		tail -1 build/fuzz/$$name.log; \
	done

demo: deps-build $(BIN)
	tools/demo ./$(BIN)

# Time coroscope on bench/targets/ and print a table (see bench/README.md);
# BENCH_ARGS=--quick skips the 100k-task and 2M-object targets.
bench: deps-build $(BIN)
	tools/bench --coroscope ./$(BIN) $(BENCH_ARGS)

install: $(BIN)
	install -D -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/coroscope
	install -D -m 644 man/coroscope.1 $(DESTDIR)$(PREFIX)/share/man/man1/coroscope.1

clean:
	rm -rf build coroscope
