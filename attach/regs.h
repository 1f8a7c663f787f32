/*
 * A thread's saved general registers, x86-64, in the order of the
 * kernel's struct user_regs_struct: the layout PTRACE_GETREGS fills and
 * an NT_PRSTATUS note's pr_reg holds, so both backends copy it as is.
 *
 * Only native unwinding needs them (symbols/unwind.h); everything else
 * reads memory.
 */
#ifndef COROSCOPE_ATTACH_REGS_H
#define COROSCOPE_ATTACH_REGS_H

#include <stddef.h>
#include <stdint.h>

enum cs_reg {
	CS_REG_R15, CS_REG_R14, CS_REG_R13, CS_REG_R12, CS_REG_RBP,
	CS_REG_RBX, CS_REG_R11, CS_REG_R10, CS_REG_R9, CS_REG_R8,
	CS_REG_RAX, CS_REG_RCX, CS_REG_RDX, CS_REG_RSI, CS_REG_RDI,
	CS_REG_ORIG_RAX, CS_REG_RIP, CS_REG_CS, CS_REG_EFLAGS, CS_REG_RSP,
	CS_REG_SS, CS_REG_FS_BASE, CS_REG_GS_BASE, CS_REG_DS, CS_REG_ES,
	CS_REG_FS, CS_REG_GS,
	CS_REG_COUNT
};

struct cs_regs {
	uint64_t r[CS_REG_COUNT];
};

/* Bytes of a user_regs_struct image (27 little-endian words). */
#define CS_REGS_IMAGE_SIZE ((size_t)CS_REG_COUNT * 8)

/* Is x86-64 system call nr futex(2) (202) or futex_waitv(2) (449), where
 * a lock's acquire blocks (orig_rax at a stop inside it, the number in
 * /proc/PID/task/TID/syscall)? */
static inline int cs_syscall_is_futex(long nr)
{
	return nr == 202 || nr == 449;
}

/* Is x86-64 system call nr restart_syscall(2) (219), which a timed wait
 * an earlier stop interrupted waits on in, its registers still the
 * call's? */
static inline int cs_syscall_is_restart(long nr)
{
	return nr == 219;
}

/*
 * The name of x86-64 system call nr when it sends bytes to a file
 * descriptor given as its first argument (write(2), writev(2), send(2)
 * and their kin), else NULL.  Asleep in one of these on a pipe, socket
 * or terminal, a thread that is interrupted returns what it has written
 * so far: attach/live_writers.c.
 */
static inline const char *cs_syscall_sends(long nr)
{
#if defined(__x86_64__)
	switch (nr) {
	case 1: return "write";
	case 18: return "pwrite64";
	case 20: return "writev";
	case 40: return "sendfile";
	case 44: return "sendto";
	case 46: return "sendmsg";
	case 296: return "pwritev";
	case 307: return "sendmmsg";
	case 328: return "pwritev2";
	default: return NULL;
	}
#else
	(void)nr;
	return NULL;  /* (another machine's numbers: none known here) */
#endif
}

/* Is x86-64 system call nr read(2) or readv(2), whose first argument
 * is the fd read from? */
static inline int cs_syscall_reads(long nr)
{
#if defined(__x86_64__)
	return nr == 0 || nr == 19;
#else
	(void)nr;
	return 0;
#endif
}

/* Is x86-64 system call nr one that receives from the fd its first
 * argument names: cs_syscall_reads()'s, recvfrom(2), recvmsg(2),
 * recvmmsg(2)? */
static inline int cs_syscall_receives(long nr)
{
#if defined(__x86_64__)
	return cs_syscall_reads(nr) || nr == 45 || nr == 47 || nr == 299;
#else
	return cs_syscall_reads(nr);
#endif
}

/* Is x86-64 system call nr connect(2) (first argument the fd)? */
static inline int cs_syscall_connects(long nr)
{
#if defined(__x86_64__)
	return nr == 42;
#else
	(void)nr;
	return 0;
#endif
}

/* Is x86-64 system call nr accept(2) or accept4(2) (first argument the
 * listening socket's fd)? */
static inline int cs_syscall_accepts(long nr)
{
#if defined(__x86_64__)
	return nr == 43 || nr == 288;
#else
	(void)nr;
	return 0;
#endif
}

/* What x86-64 system call nr waits on several fds with: its fds given
 * as an fd_set (select(2), pselect6(2): the count, then the read set),
 * an array of struct pollfd (poll(2), ppoll(2): the array, then its
 * length) or an epoll instance (epoll_wait(2) and its kin: its fd). */
enum cs_poll_call { CS_POLL_NONE, CS_POLL_SELECT, CS_POLL_POLL,
		    CS_POLL_EPOLL };

/* poll(2)'s number (-1 on another machine). */
static inline long cs_syscall_poll_nr(void)
{
#if defined(__x86_64__)
	return 7;
#else
	return -1;
#endif
}

static inline enum cs_poll_call cs_syscall_polls(long nr)
{
#if defined(__x86_64__)
	switch (nr) {
	case 23: case 270: return CS_POLL_SELECT;
	case 7: case 271: return CS_POLL_POLL;
	case 232: case 281: case 441: return CS_POLL_EPOLL;
	default: return CS_POLL_NONE;
	}
#else
	(void)nr;
	return CS_POLL_NONE;
#endif
}

/* Is x86-64 system call nr wait4(2) (first argument the pid waited
 * for: os.waitpid(), os.wait())? */
static inline int cs_syscall_waits_child(long nr)
{
#if defined(__x86_64__)
	return nr == 61;
#else
	(void)nr;
	return 0;
#endif
}

/* The name of x86-64 system call nr when, with second argument arg1, it
 * waits for a file lock on the fd its first argument names: flock(2)
 * (fcntl.flock()), fcntl(2) with F_SETLKW or F_OFD_SETLKW (fcntl.lockf(),
 * fcntl.fcntl()); else NULL. */
static inline const char *cs_syscall_locks_file(long nr,
						unsigned long long arg1)
{
#if defined(__x86_64__)
	if (nr == 73)
		return "flock";
	if (nr == 72 && (arg1 == 7 || arg1 == 38))
		return "fcntl";
	return NULL;
#else
	(void)nr;
	(void)arg1;
	return NULL;
#endif
}

/* Is x86-64 system call nr, with second argument arg1, fcntl(2)'s
 * F_OFD_SETLKW: an OFD lock's wait, which /proc/locks lists with no
 * pid? */
static inline int cs_syscall_locks_ofd(long nr, unsigned long long arg1)
{
	const char *call = cs_syscall_locks_file(nr, arg1);

	return call && arg1 == 38;
}

/* Does x86-64 system call nr (one cs_syscall_sends() names) end by
 * counting itself in the thread's syscw (/proc/PID/task/TID/io), however
 * it returns: write(2), pwrite64(2), writev(2), pwritev(2), pwritev2(2)
 * (the kernel's vfs_write() and do_writev() / do_pwritev() end with
 * inc_syscw()).  The send family and sendfile(2) are not counted so. */
static inline int cs_syscall_counts_syscw(long nr)
{
	return nr == 1 || nr == 18 || nr == 20 || nr == 296 || nr == 328;
}

/* Decode a user_regs_struct image of CS_REGS_IMAGE_SIZE bytes. */
void cs_regs_from_image(struct cs_regs *regs, const void *image);

#endif
