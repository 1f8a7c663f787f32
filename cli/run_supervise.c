#include "cli/run_supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "attach/live.h"
#include "common/duration.h"
#include "common/util.h"
#include "common/banned.h"

/* After SIGKILL, how long to wait for the tree to be gone. */
#define KILL_WAIT_MS 5000
/* How often to look at the tree while it dies (only direct children
 * report their end with SIGCHLD). */
#define POLL_MS 20
#define MAX_REAP 100000

void run_tree_now(struct run_state *st, struct proc_list *tree)
{
	run_tree_collect(st->self, st->child, &st->known, tree);
}

int run_reap(struct run_state *st)
{
	int status, n, stopped = 0;
	pid_t r;

	if (!st->child_done) {
		r = waitpid(st->child, &status,
			    WNOHANG | (st->tty_fd >= 0 ? WUNTRACED : 0));
		if (r == st->child) {
			if (WIFSTOPPED(status)) {
				stopped = 1;
			} else {
				st->child_done = 1;
				st->status = status;
			}
		} else if (r < 0 && errno == ECHILD) {
			/* A ptrace wait during a dump took its exit: it
			 * kept the status. */
			st->child_done = 1;
			if (live_reaped_status(st->child, &status))
				st->status = status;
			else
				st->status_lost = 1;
		}
	}
	for (n = 0; n < MAX_REAP; n++) {
		r = waitpid(-1, &status, WNOHANG);
		if (r <= 0)
			break;
		if (r == st->child && !st->child_done) {
			st->child_done = 1;
			st->status = status;
		}
	}
	return stopped;
}

void run_follow_stop(struct run_state *st)
{
	tcsetpgrp(st->tty_fd, getpgrp());
	raise(SIGSTOP);
	/* Continued: in the foreground (fg) the command gets the terminal
	 * back; in the background (bg) it runs without it. */
	if (tcgetpgrp(st->tty_fd) == getpgrp())
		tcsetpgrp(st->tty_fd, st->child);
	kill(-st->child, SIGCONT);
}

/*
 * Each process of the tree gets sig once: through the command's group
 * while it has members (an empty group's number is free for the kernel
 * to give to another process), or by its pid when it is not in that
 * group.  Never both: a second SIGTERM or SIGINT is "quit now, drop the
 * cleanup" to many servers (uvicorn, Celery, a graceful shutdown's
 * handler).  SIGCONT goes only to stopped processes: a running one may
 * handle it.
 */
static void signal_tree(struct run_state *st, const struct proc_list *tree,
			int sig)
{
	int group = !st->child_done && sig != SIGCONT;
	size_t i;

	for (i = 0; i < tree->n && !group && sig != SIGCONT; i++)
		group = tree->e[i].pgid == st->child;
	if (group)
		kill(-st->child, sig);
	for (i = 0; i < tree->n; i++) {
		const struct proc_entry *e = &tree->e[i];

		if (e->state == 'Z' || (group && e->pgid == st->child))
			continue;
		if (sig == SIGCONT && e->state != 'T' && e->state != 't')
			continue;
		kill(e->pid, sig);
	}
}

void run_forward_signal(const struct run_state *st, int sig)
{
	pid_t g = getpgid(st->child);

	/* (the child is not reaped yet: its number is still its group's) */
	if (g < 0 || g == st->child)
		kill(-st->child, sig);
	if (g >= 0 && g != st->child)
		kill(st->child, sig);
}

int run_wait_signal(const sigset_t *set, double ms)
{
	struct timespec ts;
	int sig;

	if (ms < 0) {
		do
			sig = sigwaitinfo(set, NULL);
		while (sig < 0 && errno == EINTR);
		return sig < 0 ? 0 : sig;
	}
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000) * 1e6);
	if (ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 0;
	sig = sigtimedwait(set, NULL, &ts);
	return sig < 0 ? 0 : sig;
}

void run_terminate_tree(struct run_state *st, const sigset_t *set)
{
	struct proc_list tree = { 0 };
	double term_end, give_up = 0;
	int killing = 0, sig;
	size_t i;
	char when[32];

	duration_format(st->o->kill_after_ms, when, sizeof(when));
	fprintf(stderr, "coroscope: stopping the command: SIGTERM, then "
		"SIGKILL after %s\n", when);
	run_tree_now(st, &tree);
	signal_tree(st, &tree, SIGTERM);
	signal_tree(st, &tree, SIGCONT);
	term_end = cs_now_ms() + (double)st->o->kill_after_ms;
	/* Bounded in time: term_end, then KILL_WAIT_MS at most. */
	for (;;) {
		run_reap(st);
		run_tree_now(st, &tree);
		if (!tree.n)
			break;
		if (!killing && run_tree_alive(&tree) && cs_now_ms() >= term_end)
			killing = 1;
		/* Every round: a process may have forked meanwhile. */
		if (killing)
			signal_tree(st, &tree, SIGKILL);
		/* Killed, or only zombies left whose parents are dying:
		 * either way it cannot take long. */
		if (!give_up && (killing || !run_tree_alive(&tree)))
			give_up = cs_now_ms() + KILL_WAIT_MS;
		if (give_up && cs_now_ms() >= give_up) {
			for (i = 0; i < tree.n; i++)
				fprintf(stderr, "coroscope: process %d did not "
					"exit\n", tree.e[i].pid);
			break;
		}
		sig = run_wait_signal(set, POLL_MS);
		/* Asked again to stop: no more patience. */
		if (sig == SIGINT || sig == SIGTERM)
			killing = 1;
	}
	proc_list_release(&tree);
}

int run_foreground_tty(void)
{
	int fd;

	for (fd = 0; fd <= 2; fd++)
		if (isatty(fd) && tcgetpgrp(fd) == getpgrp())
			return fd;
	return -1;
}

int run_start_command(struct run_state *st, const sigset_t *oldmask,
			 const struct sigaction *oldchld, int *exec_errno)
{
	int fds[2], e = 0;
	ssize_t r;
	pid_t pid;

	*exec_errno = 0;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		*exec_errno = errno;
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		*exec_errno = errno;
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		/* Should coroscope die before the command (a crash, a
		 * SIGKILL), the command must not run on unwatched: it gets
		 * the SIGKILL coroscope's timeout would have sent. */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != st->self)
			_exit(EXIT_CANNOT_INVOKE);
		setpgid(0, 0);
		/* Both sides set the foreground group, so the command never
		 * reads the terminal from the background (SIGTTOU is still
		 * blocked here). */
		if (st->tty_fd >= 0)
			tcsetpgrp(st->tty_fd, getpid());
		sigaction(SIGCHLD, oldchld, NULL);
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		execvp(st->o->argv[0], st->o->argv);
		e = errno;
		while (write(fds[1], &e, sizeof(e)) < 0 && errno == EINTR)
			;
		_exit(EXIT_NOT_FOUND);
	}
	close(fds[1]);
	/* Also here: whichever of parent and child runs first. */
	setpgid(pid, pid);
	if (st->tty_fd >= 0)
		tcsetpgrp(st->tty_fd, pid);
	do
		r = read(fds[0], &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	close(fds[0]);
	if (r == (ssize_t)sizeof(e)) {
		waitpid(pid, NULL, 0);
		*exec_errno = e;
		return -1;
	}
	return pid;
}

int run_exit_status(const struct run_state *st, int timed_out)
{
	if (timed_out)
		return CS_ERR_TIMEOUT;
	if (st->status_lost) {
		fputs("coroscope: the command's exit status was lost while "
		      "it was being read\n", stderr);
		return CS_ERR_INTERNAL;
	}
	if (WIFEXITED(st->status))
		return WEXITSTATUS(st->status);
	if (WIFSIGNALED(st->status))
		return 128 + WTERMSIG(st->status);
	return CS_ERR_INTERNAL;
}
