# coroscope -- see README.md.  `make` builds ./coroscope, `make check` runs
# every test (and the sanitizer build), `make demo` shows the tool on a
# bundled demo program.  Only `make deps`, `make demo` and `make check`
# install missing Debian packages (apt-get); `make` and `make install`
# never do.

CC ?= cc
PREFIX ?= /usr/local
SANITIZE ?=

WARN = -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes \
       -Wmissing-prototypes -Wvla -Wno-unused-parameter -Werror
CFLAGS ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -I. -MMD -MP
# The libraries of both links, the dynamic one and `make static`: add a
# library here and the static link takes it too.
# libunwind's functions are weak references (symbols/unwind_lib.c):
# UNWIND_LINKED makes a link take them from the library.
UNWIND_SYMS = create_addr_space destroy_addr_space set_caching_policy \
	init_remote step get_reg dwarf_search_unwind_table
UNWIND_LINKED = $(UNWIND_SYMS:%=-Wl,-u,_Ux86_64_%) -lunwind-x86_64
LDLIBS = -lelf -ldw -ldeflate -lncursesw $(UNWIND_LINKED)
# ./coroscope takes them from their static archives (with what those
# need: see STATIC_DEPLIBS), all but libunwind, whose Debian archive is
# not position-independent, and libc.  Loading eight shared libraries
# cost 1.6 ms of every run (3.9 against 5.5 ms for --version), most of
# it page faults, ~15 us each in a VM.  libunwind (with the libunwind
# and liblzma it loads) cost 0.5 ms more: ./coroscope loads it with
# dlopen() when --native first needs it.  The unit tests link as before.
BIN_LDLIBS = -Wl,-Bstatic -Wl,--start-group \
	$(filter-out $(UNWIND_LINKED),$(LDLIBS)) \
	-lz -llzma -lbz2 -ltinfo -Wl,--end-group -Wl,-Bdynamic

# Link-time optimisation of the release build: the readers call small
# functions of other files (field_u64, memsrc_read_u64, addrmap_get)
# hundreds of thousands of times a dump; inlined, a text dump of 10k
# tasks takes 8 % fewer instructions.  `make LTO=` builds without.
LTO ?= -flto=auto

ifneq ($(SANITIZE),)
LTO =
# ThreadSanitizer cannot share objects with the others.
ifeq ($(SANITIZE),thread)
BUILD = build/tsan
else
BUILD = build/san
endif
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
BIN = $(BUILD)/coroscope
else
BUILD = build/obj
BIN = coroscope
ALL_CFLAGS += $(LTO)
LDFLAGS += $(LTO)
endif

LIB_SRCS = $(wildcard common/*.c attach/*.c symbols/*.c readers/*.c)
CLI_SRCS = $(wildcard cli/*.c)
LIB_OBJS = $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS = $(CLI_SRCS:%.c=$(BUILD)/%.o)
UNIT_SRCS = $(wildcard tests/unit/*.c)
UNIT_BINS = $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

# Debian packages the build and the tests need (`make deps` installs them).
# libc6-dbg: libc's names for tests/test_native.py, which compares with gdb.
BUILD_PKGS = gcc make libelf-dev libdw-dev libdeflate-dev libunwind-dev \
	libncurses-dev zlib1g-dev liblzma-dev libbz2-dev
TEST_PKGS = python3 python3-pytest python3-pyelftools gdb python3-uvloop clang \
	g++ dwz python3-gevent python3-greenlet python3-trio python3-anyio \
	python3-pytest-asyncio libc6-dbg python3-uvicorn python3-starlette \
	python3-httpx python3-pytest-xdist python3-tornado python3-aiohttp \
	python3-nest-asyncio \
	strace cmark-gfm

.PHONY: FORCE all unit check check-unit check-functional check-sanitize check-tsan \
	check-soak soak fuzz demo bench deps deps-build install clean

all: $(BIN)

$(BIN): $(CLI_OBJS) $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(BIN_LDLIBS)

# The flags a build directory was made with: when they change (LTO=,
# CFLAGS=), its objects are rebuilt rather than mixed.
FLAGS_STAMP = $(BUILD)/flags
FLAGS_NOW = $(CC) $(ALL_CFLAGS) : $(LDFLAGS)

$(FLAGS_STAMP): FORCE
	@mkdir -p $(BUILD)
	@echo '$(FLAGS_NOW)' | cmp -s - $@ || echo '$(FLAGS_NOW)' > $@

$(BUILD)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) $(LDLIBS)

# Unit tests of cli/ code link the cli objects they test.
$(BUILD)/tests/test_causes: $(BUILD)/cli/run_causes.o $(BUILD)/cli/run_lock_causes.o $(BUILD)/cli/run_seen.o \
	$(BUILD)/cli/run_summary.o \
	$(BUILD)/cli/run_places.o \
	$(BUILD)/cli/run_stuck.o $(BUILD)/cli/run_pool.o \
	$(BUILD)/cli/run_fds.o $(BUILD)/cli/child_pipes.o \
	$(BUILD)/cli/timer_text.o \
	$(BUILD)/cli/run_greenlets.o \
	$(BUILD)/cli/thread_idle.o $(BUILD)/cli/watch_track.o \
	$(BUILD)/cli/alike_lines.o $(BUILD)/cli/natural_order.o \
	$(BUILD)/cli/escape.o
$(BUILD)/tests/test_alike_lines: $(BUILD)/cli/alike_lines.o $(BUILD)/cli/escape.o \
	$(BUILD)/cli/natural_order.o
$(BUILD)/tests/test_escape: $(BUILD)/cli/escape.o
$(BUILD)/tests/test_natural_order: $(BUILD)/cli/natural_order.o
$(BUILD)/tests/test_thread_alike: $(BUILD)/cli/thread_alike.o
$(BUILD)/tests/test_json: $(BUILD)/cli/json.o $(BUILD)/cli/json_digits.o \
	$(BUILD)/cli/json_plain.o $(BUILD)/cli/json_part.o \
	$(BUILD)/cli/json_writer.o $(BUILD)/cli/escape.o
$(BUILD)/tests/test_json_memo: $(BUILD)/cli/json_memo.o $(BUILD)/cli/json.o \
	$(BUILD)/cli/json_digits.o $(BUILD)/cli/json_plain.o \
	$(BUILD)/cli/json_part.o $(BUILD)/cli/json_writer.o \
	$(BUILD)/cli/escape.o
$(BUILD)/tests/test_watch_track: $(BUILD)/cli/watch_track.o
$(BUILD)/tests/test_watch_cpu: $(BUILD)/cli/watch_cpu.o
$(BUILD)/tests/test_term_cut: $(BUILD)/cli/term_cut.o $(BUILD)/cli/escape.o
$(BUILD)/tests/test_watch_lines: $(BUILD)/cli/watch_view.o \
	$(BUILD)/cli/term_cut.o $(BUILD)/cli/timer_text.o \
	$(BUILD)/cli/watch_timers.o \
	$(BUILD)/cli/watch_track.o $(BUILD)/cli/alike_lines.o \
	$(BUILD)/cli/natural_order.o \
	$(BUILD)/cli/escape.o $(BUILD)/cli/json.o $(BUILD)/cli/json_digits.o \
	$(BUILD)/cli/json_plain.o $(BUILD)/cli/json_part.o \
	$(BUILD)/cli/json_writer.o
$(BUILD)/tests/test_gc_walk: tests/support/image_memsrc.c
$(BUILD)/tests/test_deque_items: tests/support/image_memsrc.c
$(BUILD)/tests/test_symbols: tests/support/proc_memsrc.c
$(BUILD)/tests/test_debug_inflate: tests/support/proc_memsrc.c
$(BUILD)/tests/test_json $(BUILD)/tests/test_json_memo: \
	tests/support/digest_stream.c
$(BUILD)/tests/test_json $(BUILD)/tests/test_jobs: \
	tests/support/thread_count.c

-include $(shell find build -name '*.d' 2>/dev/null)

# Install what is missing, quietly; a no-op on a machine that has it all.
deps-build:
	@tools/ensure-packages $(BUILD_PKGS)

# The tests also build the static executable and the wheel.
deps: deps-build
	@tools/ensure-packages $(TEST_PKGS) $(STATIC_PKGS) $(WHEEL_PKGS)

unit: $(UNIT_BINS)

# Each step stops `make check` at its first failure, so the last lines
# say what failed; when all pass, the last line is the "check: passed" one.
#
# Its builds run CHECK_JOBS compilers at once whatever `make` was given
# (CI runs a plain `make check`, and the machine has two cores).
CHECK_JOBS ?= 2
check: deps
	$(MAKE) -j$(CHECK_JOBS) $(BIN) unit
	$(MAKE) check-unit
	$(MAKE) check-functional LEAVE_TO_SANITIZER=$(SAN_PYTHONS)
	$(MAKE) -j$(CHECK_JOBS) SANITIZE=address,undefined build/san/coroscope unit
	$(MAKE) check-sanitize SAN_AFTER_RELEASE=1
	$(MAKE) check-tsan
	$(MAKE) check-soak
	@if command -v $(FUZZ_CC) >/dev/null; then \
		$(MAKE) -j$(CHECK_JOBS) $(FUZZ_BINS) || exit 1; \
		$(MAKE) fuzz FUZZ_TIME=2 || exit 1; fuzz=fuzz; \
	else echo "fuzz: skipped, $(FUZZ_CC) is not installed"; \
		fuzz="fuzz skipped"; fi; \
	echo "check: passed (unit, functional, sanitizers, soak, $$fuzz)"

# The unit tests, and the size limits of style.md (tools/check-size).
check-unit: $(BIN) unit
	tools/run-unit $(BUILD)/tests
	tools/check-size

# The functional tests spend most of their time waiting for targets to
# start and settle, so pytest-xdist workers (python3-pytest-xdist, from
# `make deps`) overlap them: three on two cores took 432 s on one machine
# where two took 572 (the CPUs were busy 1.6 of 2); on a slower one, four
# took 551 s where three took 614.  Six took 476 s, but each of two
# clean runs then failed a different timing test (a server's start, a
# helper process's, slower than the test allowed).  On 2026-12-07
# test_run.py and test_graph.py took 142 s with four, the CPUs busy
# 47%, and 103 s with six (63%), none failing: five, between the two.
# Without xdist they run in one process.  The sanitizer runs, whose
# coroscope uses two to three times the CPU, took 440 s with three where
# two took 580 (the same machine); their longest tests wait on timeouts
# (run, watch): test_run.py's took 129 s with three, the two CPUs 59%
# busy, and 101 s with four (72%), so four.  `make check-functional
# PYTEST_JOBS=0` runs them serially.
PYTEST_JOBS ?= 5
SAN_PYTEST_JOBS ?= 4
xdist_par = $(shell [ "$(1)" != 0 ] && \
	/usr/bin/python3 -c 'import xdist' 2>/dev/null && \
	printf -- '-n %s' $(1))
PYTEST_PAR = $(call xdist_par,$(PYTEST_JOBS))
SAN_PYTEST_PAR = $(call xdist_par,$(SAN_PYTEST_JOBS))

# Within `make check` the per-interpreter tests on SAN_PYTHONS'
# interpreters are left to the sanitizer pass below, which runs the same
# assertions on them against the sanitizer build (all but the slow and
# packaging tests, which stay here): some 480 tests, a quarter of this
# pass's time; and test_watch.py's on Debian's 3.11 and 3.14t (it names
# its interpreters: `interp_id`), and those that name theirs by an
# `ident` or a `py` (test_run.py's, test_failed_tasks.py's...).  So are
# the tests of no interpreter: they ran in both passes, some 380 of them,
# 180 s of this pass (CI took 1,250 s with them, over its 20 minutes).
# Each test then runs once; the release build still runs every
# per-interpreter test on the eight other interpreters.  Run alone, it
# runs every test on every interpreter.
LEAVE_TO_SANITIZER ?=
check-functional: $(BIN)
	COROSCOPE=$(abspath $(BIN)) \
		COROSCOPE_TEST_SANITIZER_PYTHONS=$(LEAVE_TO_SANITIZER) \
		/usr/bin/python3 -m pytest -q --durations=15 $(PYTEST_PAR) tests

# The same functional tests against the sanitizer build, on two
# interpreters far apart in layout (Debian's stripped 3.11:
# _PyInterpreterFrame, no debug info, gevent, greenlet and trio; the
# free-threaded 3.14: _Py_DebugOffsets, the mimalloc heap walk) and
# without the slow and packaging tests: the sanitizer looks for
# coroscope's own memory errors.  The oldest layout (3.6: PyFrameObject,
# the old line table) meets the sanitizer in the soak below (real
# targets, 3.6 and the newest) and the readers' fuzz harness (every
# version's layout); its pytest part, 400 s of this pass's test time
# (~100 s of wall, against ~20 s in the release pass), left it on
# 2026-12-07.  Within `make check` it stands in for the release pass on
# these interpreters and for the tests of no interpreter
# (LEAVE_TO_SANITIZER above); the release pass covers the rest.  Tests
# that name their own interpreters (test_watch.py's, by `ident` or
# `py`) keep to those of theirs in SAN_PYTHONS.  This keeps `make
# check` inside CI's 20 minutes on two cores (CI took 1,250 s with
# three interpreters here and the tests of no interpreter in both
# passes; a clean clone here 1,049 s with each test once).
# SAN_PYTHONS= (empty) runs every one.
# (SAN_AFTER_RELEASE=1: a test of no interpreter skipped here for the
# pass's sake fails, as neither pass ran it: conftest.py.)
SAN_PYTHONS ?= 3.11-debian,3.14t
SAN_AFTER_RELEASE ?=
check-sanitize:
	$(MAKE) SANITIZE=address,undefined build/san/coroscope unit
	ASAN_OPTIONS=detect_leaks=1 tools/run-unit build/san/tests
	COROSCOPE=$(abspath build/san/coroscope) COROSCOPE_SANITIZED=1 \
		COROSCOPE_TEST_AFTER_RELEASE=$(SAN_AFTER_RELEASE) \
		COROSCOPE_TEST_PYTHONS=$(SAN_PYTHONS) \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		/usr/bin/python3 -m pytest -q --durations=15 $(SAN_PYTEST_PAR) \
		-m 'not slow and not packaging' tests

# ThreadSanitizer over what runs on several threads: the workers that
# run those jobs (tests/unit/test_jobs.c), the GC walk from
# both ends of a long list (tests/unit/test_gc_walk.c, and the 10,000
# tasks below), the capture's copy and its planned, missed and
# fallback rounds (every test dumps a captured target; test_capture.py's
# on the interpreter below: its gevent and trio tests, on Debian's 3.11
# whatever the interpreter, read those on one thread as any target's,
# and took 26 s of this pass's test time), the generators read on two
# threads (10,000 tasks; 5,000 generators), the JSON document's parts
# and its writer (the same, with --json; with COROSCOPE_TEST_CPUS=4 in
# test_many_tasks_same_on_any_cpus, which with COROSCOPE_TEST_TSAN=1
# makes only its three dumps that run threads).  Any report fails the
# test (conftest.py's SANITIZER_SIGNS).
TSAN_TESTS = tests/test_heaps.py \
	tests/test_capture.py::test_threads_and_locals \
	tests/test_capture.py::test_native_frames \
	tests/test_capture.py::test_tasks_and_graph \
	tests/test_control.py::test_many_threads_let_go \
	tests/test_tasks.py::test_many_tasks_all_listed \
	tests/test_tasks.py::test_many_tasks_generators \
	tests/test_tasks.py::test_many_tasks_same_on_any_cpus
# One interpreter: what runs on threads is the same code on all; the
# free-threaded build's heaps, read on threads only there.  The GC's
# lists walked from both ends are test_gc_walk's, above (with
# 3.11-debian too, the pytest part took 61-72 s where it takes about
# half: `make check-tsan TSAN_PYTHONS=3.11-debian,3.14t`).
# The GC walk's unit test (18 s on one thread) runs beside the pytest
# part, which waits on its targets much of its time; its log after it.
TSAN_PYTHONS ?= 3.14t
check-tsan:
	$(MAKE) -j$(CHECK_JOBS) SANITIZE=thread build/tsan/coroscope \
		build/tsan/tests/test_gc_walk build/tsan/tests/test_jobs
	build/tsan/tests/test_jobs
	COROSCOPE_SANITIZED=1 build/tsan/tests/test_gc_walk \
		> build/tsan/test_gc_walk.log 2>&1 & walk=$$!; \
	COROSCOPE=$(abspath build/tsan/coroscope) COROSCOPE_SANITIZED=1 \
		COROSCOPE_TEST_TSAN=1 \
		COROSCOPE_TEST_PYTHONS=$(TSAN_PYTHONS) \
		/usr/bin/python3 -m pytest -q $(SAN_PYTEST_PAR) \
		-m 'not slow and not packaging' $(TSAN_TESTS); rc=$$?; \
	wait $$walk; walked=$$?; cat build/tsan/test_gc_walk.log; \
	[ $$rc = 0 ] && [ $$walked = 0 ]

# Repeated dumps, blocked and --no-block, of a target that never stands
# still, on every CPython found (tools/soak; ends "soak: N passed, N
# failed").  `make soak SOAK_N=50 SOAK_ARGS=--interpreters=3` for less.
SOAK_N ?= 300
SOAK_ARGS ?=

soak: $(BIN)
	COROSCOPE=$(abspath $(BIN)) tools/soak -n $(SOAK_N) $(SOAK_ARGS)

# The short soak `make check` runs: 10 dumps per mode on the oldest and
# the newest interpreter, with the sanitizer build (20 took 33 s of the
# 1,171 s a clean clone took on 2026-12-07, CI's limit 1,200; `make
# soak` runs 300).
check-soak:
	$(MAKE) SANITIZE=address,undefined build/san/coroscope
	COROSCOPE=$(abspath build/san/coroscope) COROSCOPE_SANITIZED=1 \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		tools/soak -n 10 --interpreters 2

# libFuzzer harnesses: each tests/fuzz/fuzz_NAME.c is linked with the
# library built for fuzzing and runs FUZZ_TIME seconds on a copy of
# tests/fuzz/corpus/NAME (libFuzzer adds inputs to its corpus directory;
# the checked-in seeds must stay small).  Logs: build/fuzz/NAME.log.
FUZZ_CC ?= clang
FUZZ_TIME ?= 20
FUZZ_FLAGS = -std=c11 -D_GNU_SOURCE -g -O1 -I. -MMD -MP -fno-omit-frame-pointer \
	-Wall -Wextra -Wno-unused-parameter -Werror
FUZZ_SRCS = $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS = $(FUZZ_SRCS:tests/fuzz/%.c=build/fuzz/%)
FUZZ_LIB_OBJS = $(LIB_SRCS:%.c=build/fuzz/obj/%.o)

# Keep the objects between runs (make would delete them as intermediate).
.SECONDARY: $(FUZZ_LIB_OBJS)

build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,address,undefined -c -o $@ $<

build/fuzz/fuzz_readers: tests/support/image_memsrc.c
# (cli/ code: the objects it tests)
build/fuzz/fuzz_term_cut: build/fuzz/obj/cli/escape.o build/fuzz/obj/cli/term_cut.o

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -o $@ $(filter %.c %.o,$^) $(LDLIBS)

# FUZZ_JOBS harnesses at once (the machine's CPUs): each gets FUZZ_TIME
# seconds as before, the step takes half the time on two CPUs.
FUZZ_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
fuzz: $(FUZZ_BINS)
	@printf '%s\n' $(FUZZ_BINS) | \
		xargs -n 1 -P $(FUZZ_JOBS) tools/fuzz-one $(FUZZ_TIME) || \
		{ echo "fuzz: a harness failed (above)"; exit 1; }

demo: deps-build $(BIN)
	tools/demo ./$(BIN)

# Time coroscope on bench/targets/ and print a table (see bench/README.md);
# BENCH_ARGS=--quick skips the 100k-task and 2M-object targets.
bench: $(BIN)
	tools/bench --coroscope ./$(BIN) $(BENCH_ARGS)

install: $(BIN)
	install -D -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/coroscope
	install -D -m 644 man/coroscope.1 $(DESTDIR)$(PREFIX)/share/man/man1/coroscope.1
	install -D -m 644 completion/coroscope.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/coroscope

clean:
	rm -rf build coroscope dist

# `make static`: one executable that needs nothing from the machine it
# runs on (a container with no libc, a sidecar's empty root).  It takes
# LDLIBS plus what their static archives need in turn: libelf and libdw
# read zlib-, xz- and bzip2-compressed sections, libunwind (when LDLIBS
# has it) reads xz-compressed MiniDebugInfo.  The group makes archive
# order irrelevant, and unused archives cost nothing.  STATIC_PKGS are the
# Debian packages holding those .a files (an elfutils newer than 0.188
# also needs -lzstd from libzstd-dev).
STATIC_BIN = build/static/coroscope
STATIC_DEPLIBS = -lunwind -lz -llzma -lbz2 -ltinfo
STATIC_LDLIBS = -Wl,--start-group $(LDLIBS) $(STATIC_DEPLIBS) -Wl,--end-group
STATIC_PKGS = libc6-dev libelf-dev libdw-dev libdeflate-dev zlib1g-dev \
	liblzma-dev libbz2-dev libncurses-dev

.PHONY: static deps-static

# Like every build target, static and wheel install nothing: `make deps`
# (or these two) bring what they need.
deps-static: deps-build
	@tools/ensure-packages $(STATIC_PKGS)

static: $(STATIC_BIN)

$(STATIC_BIN): $(CLI_OBJS) $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -static $(LDFLAGS) -o $@ $^ $(STATIC_LDLIBS)

# `make wheel`: dist/coroscope-VERSION-py3-none-PLATFORMS.whl holding
# the static executable (stripped; its build id note stays) as a script and
# the pytest plugin, built by Debian's python3-build without network in a
# staging directory (see packaging/setup.py for the platform tags).
WHEEL_STAGE = build/wheel
WHEEL_STAMP = dist/.coroscope-wheel
WHEEL_SRCS = packaging/setup.py packaging/pyproject.toml \
	python/coroscope_pytest.py
WHEEL_PKGS = python3-build python3-wheel python3-setuptools binutils

.PHONY: wheel deps-wheel

deps-wheel: deps-static
	@tools/ensure-packages $(WHEEL_PKGS)

wheel: $(WHEEL_STAMP)
	@ls dist/coroscope-*.whl

$(WHEEL_STAMP): $(STATIC_BIN) $(WHEEL_SRCS)
	rm -rf $(WHEEL_STAGE)
	mkdir -p $(WHEEL_STAGE)/scripts dist
	cp $(WHEEL_SRCS) $(WHEEL_STAGE)/
	strip -o $(WHEEL_STAGE)/scripts/coroscope $(STATIC_BIN)
	rm -f dist/coroscope-*.whl
	cd $(WHEEL_STAGE) && /usr/bin/python3 -m build --no-isolation --wheel \
		--outdir $(abspath dist) . >build.log 2>&1 || \
		{ tail -30 build.log; exit 1; }
	touch $@
