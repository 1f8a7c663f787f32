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
LDLIBS = -lelf -ldw

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
BUILD_PKGS = gcc make libelf-dev libdw-dev libunwind-dev
TEST_PKGS = python3 python3-pytest python3-pyelftools gdb python3-uvloop

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

# The same functional tests against the sanitizer build.
check-sanitize:
	$(MAKE) SANITIZE=address,undefined build/san/coroscope unit
	ASAN_OPTIONS=detect_leaks=1 tools/run-unit build/san/tests
	COROSCOPE=$(abspath build/san/coroscope) COROSCOPE_SANITIZED=1 \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		/usr/bin/python3 -m pytest -q -m 'not slow' tests

demo: deps-build $(BIN)
	tools/demo ./$(BIN)

install: $(BIN)
	install -D -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/coroscope
	install -D -m 644 man/coroscope.1 $(DESTDIR)$(PREFIX)/share/man/man1/coroscope.1

clean:
	rm -rf build coroscope
