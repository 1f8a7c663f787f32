#include "attach/core_internal.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/le.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/*
 * What a core says about the process: pid, names, the command line (from
 * argv in the saved stack), the signal that ended it, and its threads.
 */

/*
 * Text from the target as live_cmdline() makes it: trailing NULs dropped
 * (and spaces, with trim_spaces: the kernel turns the NULs of pr_psargs
 * into spaces), the NULs between arguments as spaces; the rest as it is,
 * escaped where it is shown (cli/escape.h).
 */
static char *clean_text(const char *s, size_t n, int trim_spaces)
{
	char *out;
	size_t i;

	while (n > 0 && (s[n - 1] == '\0' || (trim_spaces && s[n - 1] == ' ')))
		n--;
	if (n == 0)
		return NULL;
	out = xmalloc(n + 1);
	for (i = 0; i < n; i++)
		out[i] = s[i] == '\0' ? ' ' : s[i];
	out[n] = '\0';
	return out;
}

static uint64_t word_at(const unsigned char *win, size_t k)
{
	return le_u64(win + k * 8);
}

/*
 * The saved stack below the auxiliary vector, which the kernel put just
 * below the AT_RANDOM bytes (else AT_EXECFN): at most AUXV_SEARCH bytes
 * read into a new buffer (*wlen), in which the copy of NT_AUXV starts at
 * *auxv_at.  *lo is the address of the buffer's first byte.  NULL when
 * it is not there.
 */
static unsigned char *stack_below_auxv(struct core *co, uint64_t *lo,
				       size_t *wlen, size_t *auxv_at)
{
	uint64_t anchor = core_auxv_get(co, AUX_RANDOM);
	unsigned char *win;
	size_t p;
	long i;

	if (!anchor)
		anchor = core_auxv_get(co, AUX_EXECFN);
	anchor &= ~(uint64_t)7;
	if (!anchor || co->auxv_len < 32)
		return NULL;
	i = core_seg_below(co, anchor);
	if (i < 0 || anchor > co->segs[i].end)
		return NULL;
	*lo = co->segs[i].start;
	if (anchor - *lo > AUXV_SEARCH)
		*lo = anchor - AUXV_SEARCH;
	*wlen = (size_t)(anchor - *lo);
	if (*wlen < co->auxv_len + 32)
		return NULL;
	win = xmalloc(*wlen);
	if (core_read_saved(co, *lo, win, *wlen) != (long)*wlen) {
		free(win);
		return NULL;
	}
	/* lo is 8-aligned (anchor is, and so are segments), so every
	 * multiple of 8 in win is an aligned word of the target. */
	for (p = (*wlen - co->auxv_len) & ~(size_t)7; ; p -= 8) {
		if (!memcmp(win + p, co->auxv, co->auxv_len))
			break;
		if (p < 8) {
			free(win);
			return NULL;
		}
	}
	*auxv_at = p;
	return win;
}

/* Where argv and envp are, in words of the window below the auxv. */
struct arg_arrays {
	size_t argc_at;        /* word index of argc; argv[] follows it */
	size_t argv_end;       /* word index of argv's NULL */
	size_t envc;
};

/*
 * Walk down from the auxv at word k: envp's NULL, envp[], argv's NULL,
 * argv[], argc (the word that equals the count of pointers above it).
 * 0, or -1 when the words do not add up.
 */
static int find_arg_arrays(const unsigned char *win, size_t k,
			   struct arg_arrays *aa)
{
	aa->envc = 0;
	if (k < 3 || word_at(win, k - 1) != 0)
		return -1;
	k--;
	while (k > 0 && word_at(win, k - 1) != 0) {
		k--;
		aa->envc++;
	}
	if (k == 0)
		return -1;
	aa->argv_end = --k;
	for (;;) {
		size_t argc;

		if (k == 0)
			return -1;
		k--;
		argc = aa->argv_end - k - 1;
		if (word_at(win, k) == argc)
			break;
		if (word_at(win, k) == 0 || argc > MAX_ARGS)
			return -1;
	}
	aa->argc_at = k;
	return aa->argv_end - k - 1 == 0 ? -1 : 0;
}

/*
 * The argument strings from arg_start: up to where the environment
 * strings start (env_start, 0 when there is no environment, then up to
 * argc NULs), at most CMDLINE_MAX bytes.
 */
static char *read_arg_strings(struct core *co, uint64_t arg_start,
			      uint64_t env_start, size_t argc)
{
	uint64_t len = CMDLINE_MAX;
	unsigned char *buf;
	size_t nul_end, seen = 0, j;
	long got;
	char *out;

	if (env_start) {
		if (env_start <= arg_start)
			return NULL;
		if (env_start - arg_start < len)
			len = env_start - arg_start;
	}
	buf = xmalloc((size_t)len);
	got = core_read_saved(co, arg_start, buf, (size_t)len);
	if (got <= 0) {
		free(buf);
		return NULL;
	}
	nul_end = (size_t)got;
	for (j = 0; !env_start && j < (size_t)got; j++) {
		if (buf[j] == '\0' && ++seen == argc) {
			nul_end = j + 1;
			break;
		}
	}
	out = clean_text((const char *)buf, nul_end, 0);
	free(buf);
	return out;
}

/*
 * The command line as /proc/PID/cmdline showed it: the argv strings in
 * the saved stack.  The kernel put the auxiliary vector just below the
 * AT_RANDOM bytes, and below it envp[], NULL, argv[], NULL, argc; the
 * auxv is found by its copy in NT_AUXV, then the arrays are walked down.
 * NULL when any of it does not add up.
 */
static char *cmdline_from_stack(struct core *co)
{
	struct arg_arrays aa;
	uint64_t lo, arg_start, env_start = 0;
	size_t wlen, auxv_at;
	unsigned char *win = stack_below_auxv(co, &lo, &wlen, &auxv_at);

	if (!win)
		return NULL;
	if (find_arg_arrays(win, auxv_at / 8, &aa) < 0) {
		free(win);
		return NULL;
	}
	arg_start = word_at(win, aa.argc_at + 1);
	if (aa.envc)
		env_start = word_at(win, aa.argv_end + 1);
	free(win);
	return read_arg_strings(co, arg_start, env_start,
				aa.argv_end - aa.argc_at - 1);
}

void core_read_execfn(struct core *co)
{
	uint64_t a = core_auxv_get(co, AUX_EXECFN);
	char *buf;
	long got;

	if (!a)
		return;
	buf = xmalloc(EXECFN_MAX);
	got = core_read_saved(co, a, buf, EXECFN_MAX - 1);
	if (got > 0) {
		buf[got] = '\0';
		if (strlen(buf) < (size_t)got && buf[0])
			co->execfn = xstrdup(buf);
	}
	free(buf);
}


static int fault_has_addr(int sig)
{
	return sig == 4 || sig == 5 || sig == 7 || sig == 8 || sig == 11;
}

void core_fill_info(struct core *co, const struct note_state *ns)
{
	struct core_info *in = &co->info;
	char *psargs = NULL;
	size_t i;

	if (ns->has_prpsinfo) {
		const char *fname = (const char *)ns->prpsinfo + PRPSINFO_FNAME;
		char *c;

		in->pid = le_i32(ns->prpsinfo + PRPSINFO_PID);
		in->uid = (long)(uint32_t)le_i32(ns->prpsinfo + PRPSINFO_UID);
		in->gid = (long)(uint32_t)le_i32(ns->prpsinfo + PRPSINFO_GID);
		in->has_ids = 1;
		c = clean_text(fname, strnlen(fname, 16), 1);
		if (c) {
			memcpy(in->comm, c, strlen(c) + 1);
			free(c);
		}
		psargs = clean_text((const char *)ns->prpsinfo + PRPSINFO_PSARGS,
				    strnlen((const char *)ns->prpsinfo +
					    PRPSINFO_PSARGS, 80), 1);
	}
	if (in->pid <= 0) {
		/* The main thread's tid is the pid, and the lowest. */
		in->pid = 0;
		for (i = 0; i < ns->nthreads; i++)
			if (ns->th[i].tid > 0 &&
			    (!in->pid || ns->th[i].tid < in->pid))
				in->pid = ns->th[i].tid;
	}
	in->psargs = psargs;
	in->command = cmdline_from_stack(co);
	if (!in->command && psargs)
		in->command = xstrdup(psargs);

	/*
	 * The kernel lists the thread that took the signal first and gives
	 * every thread its number in pr_cursig; gdb gives it only to a
	 * thread stopped by a signal, and 0 to all when it saved a running
	 * process (its SIGSTOP siginfo is its own doing, not the target's).
	 */
	for (i = 0; i < ns->nthreads && !in->signal; i++) {
		const struct note_thread *t = &ns->th[i];

		if (t->cursig <= 0)
			continue;
		in->signal = t->cursig;
		in->signal_tid = t->tid;
		if (!t->has_siginfo ||
		    le_i32(t->siginfo + SIGINFO_SIGNO) != t->cursig)
			continue;
		in->has_siginfo = 1;
		in->si_code = le_i32(t->siginfo + SIGINFO_CODE);
		if (in->si_code > 0 && fault_has_addr(in->signal)) {
			in->has_fault_addr = 1;
			in->fault_addr = le_u64(t->siginfo + SIGINFO_FIELDS);
		} else if (in->si_code == 0 /* SI_USER: kill() */ ||
			   in->si_code == -1 /* SI_QUEUE: sigqueue() */ ||
			   in->si_code == -3 /* SI_MESGQ */ ||
			   in->si_code == -4 /* SI_ASYNCIO */ ||
			   in->si_code == -6 /* SI_TKILL: tkill(), abort() */) {
			/* These carry si_pid; SI_TIMER and SI_SIGIO put other
			 * fields in that place. */
			in->sender_pid = le_i32(t->siginfo + SIGINFO_FIELDS);
		}
	}
	in->signal_name = core_signal_name(in->signal);
}


int core_make_threads(struct memsrc *ms, const struct note_state *ns,
			struct core *co, struct cs_err *err)
{
	size_t i;

	if (!ns->nthreads)
		return cs_fail(err, CS_ERR_CORE,
			       "core file '%s' has no thread (NT_PRSTATUS) notes",
			       co->info.path);
	ms->threads = xcalloc(ns->nthreads, sizeof(*ms->threads));
	for (i = 0; i < ns->nthreads; i++) {
		ms->threads[i].tid = ns->th[i].tid;
		ms->threads[i].ns_tid = ns->th[i].tid;
		ms->threads[i].fs_base = ns->th[i].fs_base;
		ms->threads[i].has_fs_base = 1;
		ms->threads[i].regs = ns->th[i].regs;
		ms->threads[i].has_regs = 1;
	}
	ms->nthreads = ns->nthreads;
	return 0;
}


