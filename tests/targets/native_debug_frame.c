/*
 * A C library for tests/test_native.py, built at test time with
 * -fno-asynchronous-unwind-tables -g -O2: its functions have call-frame
 * information in .debug_frame only (none in .eh_frame) and no frame
 * pointer, so only an unwinder that reads .debug_frame gets out of them.
 * cs_df_block(fd) blocks in read(fd) three calls deep.
 */
#include <unistd.h>

long cs_df_block(int fd);

/* Keep the calls real calls (not inlined, not tail calls) with their
 * own stack frames. */
#define KEEP(x) __asm__ volatile("" : "+r"(x) :: "memory")

__attribute__((noinline)) static long df_inner(int fd)
{
	char buf[40];
	long n = read(fd, buf, 1);

	KEEP(n);
	return n + buf[0];
}

__attribute__((noinline)) static long df_middle(int fd)
{
	long n = df_inner(fd);

	KEEP(n);
	return n * 3;
}

long cs_df_block(int fd)
{
	long n = df_middle(fd);

	KEEP(n);
	return n + 1;
}
