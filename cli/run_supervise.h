/*
 * Supervising the command of `coroscope run`: starting it in a process
 * group of its own (with the terminal, when coroscope has one), reaping
 * it and the orphans coroscope adopts, following job control, waiting
 * for signals, and stopping the whole tree (SIGTERM, then SIGKILL).
 */
#ifndef COROSCOPE_CLI_RUN_SUPERVISE_H
#define COROSCOPE_CLI_RUN_SUPERVISE_H

#include <signal.h>

#include "cli/run_tree.h"

/* Exit statuses of timeout(1), which run follows. */
#define EXIT_CANNOT_INVOKE 126
#define EXIT_NOT_FOUND 127

struct run_options {
	long long timeout_ms;      /* 0: no timeout */
	long long kill_after_ms;
	/* --sample-last: sample the tree this long before the timeout;
	 * 0 not at all; -1 the default (run_sample_window()) */
	long long sample_last_ms;
	const char *report;        /* --report FILE, or NULL */
	int no_native;             /* --no-native: Python frames only */
	int no_source;             /* --no-source: none in the text report */
	int all;                   /* --all: alike tasks and threads one by
				      one, not grouped */
	char **argv;               /* the command, NULL-terminated */
};

struct run_state {
	const struct run_options *o;
	int self;                  /* coroscope's pid */
	int child;                 /* the command; also its process group */
	int tty_fd;                /* the terminal the command owns, or -1 */
	int child_done;
	int status;                /* wait status, once child_done */
	int status_lost;           /* reaped by a tracer wait: unknown */
	struct proc_list known;    /* the tree as last seen */
};

/* The terminal coroscope runs in the foreground of, or -1. */
int run_foreground_tty(void);

/*
 * Fork and exec the command in its own process group.  The child
 * restores coroscope's original signal mask and SIGCHLD disposition, so
 * the command starts as it would have without coroscope; an exec failure
 * comes back through a close-on-exec pipe.  Returns the pid, or -1 with
 * the exec's errno in *exec_errno.
 */
int run_start_command(struct run_state *st, const sigset_t *oldmask,
		      const struct sigaction *oldchld, int *exec_errno);

/* The command's tree now (run_tree_collect() with st's pids). */
void run_tree_now(struct run_state *st, struct proc_list *tree);

/*
 * Reap every child that has ended (the command, and orphans adopted as
 * subreaper), noting the command's status.  1 when the command was
 * stopped (only reported with a terminal): call run_follow_stop().
 */
int run_reap(struct run_state *st);

/*
 * Job control with a terminal: the command was stopped (^Z), so stop
 * coroscope too, giving the terminal back to coroscope's group for the
 * shell to take; when continued, hand it back and continue the command.
 */
void run_follow_stop(struct run_state *st);

/* Wait for a signal of set, at most ms (forever when ms < 0): the
 * signal, or 0 when the time ran out. */
int run_wait_signal(const sigset_t *set, double ms);

/* A signal coroscope received, passed on to the command: to its group,
 * or to the command alone once it has left that group; once each. */
void run_forward_signal(const struct run_state *st, int sig);

/*
 * SIGTERM to the whole tree, once to each process (and SIGCONT, for
 * stopped members), SIGKILL
 * to what is left after --kill-after or at a second SIGINT/SIGTERM, and
 * wait until every process is gone and reaped.
 */
void run_terminate_tree(struct run_state *st, const sigset_t *set);

/* run's exit status: the command's, 128+N for signal N, 124 (timeout). */
int run_exit_status(const struct run_state *st, int timed_out);

#endif
