/*
 * Whether two processes run one program image: a child forked without
 * exec (common/procfs_image.c).  Its memory is a copy of its parent's,
 * objects at the same addresses; an exec'd child's is new, though with
 * ASLR off (under gdb, `setarch -R`) it may put the same objects at the
 * same addresses.  The kernel's AT_RANDOM bytes tell them apart: 16
 * random bytes each exec puts on the new stack, that a fork copies.
 */
#ifndef COROSCOPE_COMMON_PROCFS_IMAGE_H
#define COROSCOPE_COMMON_PROCFS_IMAGE_H

/* Process pid's AT_RANDOM bytes into out: 0, or -1 (gone, not ours, no
 * such entry). */
int procfs_at_random(int pid, unsigned char out[16]);

/* 1 when a and b have the same AT_RANDOM bytes (one is a fork of the
 * other, or both of a third, with no exec since), 0 when not, -1 when
 * either cannot be read. */
int procfs_same_image(int a, int b);

#endif
