/*
 * Which frames are "the user's own code": the one rule every report uses
 * to blame a stuck task or thread at the program's line rather than at
 * the library it waits in (the wait-for graph's blame, watch's "where",
 * run's causes).
 *
 * A file is not the user's when it is not a real file ("<frozen ...>",
 * "<string>", no name), when it lies in an installed package
 * (".../site-packages/", ".../dist-packages/"), or in a CPython's
 * standard library: a directory "lib/pythonX.Y/" (or "lib64/...", or
 * "pythonX.Yt/" for a free-threaded build), or the directory given as
 * stdlib when the caller learnt where the target's own library is (see
 * py_stdlib_dir()).  Pure functions of the name: nothing is read.
 */
#ifndef COROSCOPE_READERS_USERCODE_H
#define COROSCOPE_READERS_USERCODE_H

#include <stddef.h>

/* 1 when file is the user's own code; stdlib may be NULL or "". */
int py_is_user_file(const char *file, const char *stdlib);

/* Of frames f[0..n) (innermost first) none in a file of the program's
 * own: one given as `python -c CODE` or on stdin runs as "<string>" or
 * "<stdin>" from its module frame (the outermost) in, and its innermost
 * frame there is the program's.  That frame, or NULL. */
struct py_frame;
struct py_code;
/* Code of a program given inline: `python -c`, or on stdin. */
int py_code_is_inline(const struct py_code *code);
const struct py_frame *py_inline_program_frame(
	const struct py_frame *const *f, size_t n);

/*
 * The standard library's directory, from the name of a file of it that
 * only the standard library has (".../threading.py", ".../asyncio/..."):
 * its length, the directory copied into out with its trailing '/'; 0
 * (out untouched) when file is not such a file or out is too small.
 */
size_t py_stdlib_dir(const char *file, char *out, size_t len);

/*
 * 1 when file is a scheduler's machinery under the call a task waits in,
 * no use as its "innermost" frame: trio parks every task in the same
 * _async_yield of trio/_core/_traps.py, most through the same
 * ParkingLot.park, where an asyncio task's innermost frame is the call
 * it waits in (Event.wait).  The reports name the first frame above
 * these instead (trio's Event.wait, Lock.acquire, sleep_forever).
 * So is asyncio's Python Future's __await__ (nest_asyncio puts that
 * Future in place of the C one, which has no frame): Event.wait, not
 * futures.py, is where such a task waits.
 */
int py_is_scheduler_trap(const char *file);
/*
 * trio's sleeps (trio/_timeouts.py): trio.sleep() calls sleep_until(),
 * which calls sleep_forever() in a cancel scope with a deadline.  Of a
 * run of such frames above the traps, the reports name the outermost,
 * the call the program made: a task in trio.sleep(60) is in sleep, not
 * in sleep_forever.
 */
int py_is_trio_sleep(const char *file);

#endif
