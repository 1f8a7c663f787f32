/*
 * Where a frame, a task or a coroutine is, as `run` says it
 * (cli/run_places.c).
 */
#ifndef COROSCOPE_CLI_RUN_PLACES_H
#define COROSCOPE_CLI_RUN_PLACES_H

#include <stddef.h>

struct strbuf;
struct py_frame;
struct py_async;
struct py_task;
struct addrmap;

/* "FILE:LINE in FUNCTION" of a place known as text (a worker's
 * traceback's): line -1 as "?", function NULL as "?" */
void run_add_place_text(struct strbuf *sb, const char *file, long line,
			const char *function);

/* "FILE:LINE in QUALNAME", with qualname given or the code's own */
void run_add_place_as(struct strbuf *sb, const struct py_frame *f,
		      const char *qualname);
void run_add_frame_place(struct strbuf *sb, const struct py_frame *f);
/* The innermost of frames[0..n) (innermost first) in a file of the
 * program's own (readers/usercode.h), or NULL. */
const struct py_frame *run_own_frame(const struct py_frame *frames,
				     size_t n);
/* The frame of frames[0..n) (innermost first) running function `func`
 * of a file ending `file`, when every frame inside it is of a file
 * ending one of inner[0..ninner) (a server's or a loop's own waiting),
 * else NULL. */
const struct py_frame *run_frame_waiting_in(const struct py_frame *frames,
					    size_t n, const char *file,
					    const char *func,
					    const char *const *inner,
					    size_t ninner);
/* Into out (initialized here): the addresses of the tasks that await
 * another task (a gather's, a TaskGroup's, a nursery's parent). */
void run_tasks_awaiting(const struct py_async *a, struct addrmap *out);
/* "task NAME at FILE:LINE in QUALNAME": where its own code's innermost
 * coroutine with a frame is suspended, followed by " (innermost FILE:
 * LINE in QUALNAME)" when a library's coroutine is further in;
 * run_add_task_where() adds only " at ..." (nothing when no coroutine
 * of it has a frame). */
void run_add_task_place(struct strbuf *sb, const struct py_async *a,
			const struct py_task *task);
void run_add_task_where(struct strbuf *sb, const struct py_async *a,
			const struct py_task *task);

/* The coroutine of task t in asyncio's Server.serve_forever(), its
 * innermost, or NULL: a task serving by design, no stuck task
 * (cli/run_serves.c gives it an idle cause). */
const struct py_gen *run_task_serving_forever(const struct py_async *a,
					      const struct py_task *t);

#endif
