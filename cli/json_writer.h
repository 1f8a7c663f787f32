/*
 * A thread that writes a large JSON document's blocks to its stream
 * while the next blocks are being made.
 *
 * Writing 33 MB (a 10k-task dump) into a file takes the kernel ~12 ms of
 * copying into the page cache, and making it takes about as long: one
 * after the other in one thread, they added up.  The producer fills one
 * of a few blocks, hands it over with json_writer_swap() and carries on
 * in another; the writer thread writes them in order.  Nothing else may
 * write to the stream between json_writer_start() and json_writer_stop().
 */
#ifndef COROSCOPE_CLI_JSON_WRITER_H
#define COROSCOPE_CLI_JSON_WRITER_H

#include <stddef.h>
#include <stdio.h>

struct json_writer;

/* Start writing to out in blocks of `block` bytes; *first receives the
 * first empty block.  NULL when no thread can be started (the caller
 * then writes in its own thread). */
struct json_writer *json_writer_start(FILE *out, size_t block, char **first);
/* Queue len bytes of full (a block this writer gave out) for writing;
 * return an empty block, waiting while every block is queued.  After a
 * write failed, blocks are dropped unwritten (the stream's error
 * indicator tells; see json_writer_stop()). */
char *json_writer_swap(struct json_writer *w, char *full, size_t len);
/* Queue len bytes at mem, map_size bytes from hugeheap_take() (a block
 * made elsewhere: no copy), for writing after what is queued; once
 * written, the writer gives it to hugeheap_keep().  May wait for room in
 * the queue. */
void json_writer_hand(struct json_writer *w, char *mem, size_t len,
		      size_t map_size);
/* Write what is queued plus len bytes of last (or none with NULL), end
 * the thread and free w.  0, or -1 when a write failed (ferror(out) is
 * set then, and errno says why). */
int json_writer_stop(struct json_writer *w, char *last, size_t len);

#endif
