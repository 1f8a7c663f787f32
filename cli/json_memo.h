/*
 * Runs of a JSON document made once and copied after that.
 *
 * A 10k-task dump writes 100,000 frames and generators whose members
 * mostly repeat: the same function, qualname and file, at the same
 * nesting, for every frame of one code object.  Made key by key, string
 * by string, they cost more than all the reading did.  A memo keeps the
 * bytes a run came out as the first time, under a key that names all
 * they depend on, and copies them whenever the same run comes again at
 * the same place.
 *
 * The caller's key must determine the run: json_memo_write() adds the
 * place (nesting depth, whether a comma is due, pretty or not).  A memo
 * belongs to one struct json (one thread).
 */
#ifndef COROSCOPE_CLI_JSON_MEMO_H
#define COROSCOPE_CLI_JSON_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include "cli/json.h"

#define JSON_MEMO_KEY 3

struct json_memo_entry;

#define JSON_MEMO_RECENT 8
/* The most holes a run may have (json_memo_write_holes()). */
#define JSON_MEMO_HOLES 6

struct json_memo {
	struct json_memo_entry *slots;  /* open addressing; cap a power of 2 */
	size_t cap, n;
	/* The slot (+ 1; 0 for none) last found for a kind of run and
	 * place (cli/json_memo.c, recent_of()): the one looked at first. */
	size_t recent[JSON_MEMO_RECENT];
	char *bytes;                    /* every run's bytes, end to end */
	size_t nbytes, abytes;
};

void json_memo_init(struct json_memo *m);
void json_memo_release(struct json_memo *m);

typedef void json_memo_fn(struct json *j, const void *arg);
/*
 * Write into j what fn(j, arg) writes: the bytes kept under key at this
 * place, or else fn's, kept for next time.  fn must leave j at the depth
 * it found it at and write the same bytes for the same key whenever it
 * runs in the same place.  What is kept is bounded (JSON_MEMO_MAX_*):
 * past that, fn writes every time.
 */
void json_memo_write(struct json *j, struct json_memo *m,
		     const uint64_t key[JSON_MEMO_KEY], json_memo_fn *fn,
		     const void *arg);

typedef void json_memo_piece_fn(struct json *j, const void *arg, size_t i);
/*
 * json_memo_write() of a run with holes: values that differ every time
 * (an address, a line) between bytes that do not.  fn(j, arg, i) writes
 * the run's i-th piece, for i from 0 to n (at most JSON_MEMO_HOLES); the
 * hole h[i] follows piece i, which ends with its key.  A run may open
 * and close objects and arrays, as long as it ends at the depth it
 * began at.  The key must name everything the pieces depend on (not the
 * holes' values, which are written anew each time); one key, one n.
 */
void json_memo_write_holes(struct json *j, struct json_memo *m,
			   const uint64_t key[JSON_MEMO_KEY],
			   json_memo_piece_fn *fn, const void *arg,
			   const struct json_hole *h, size_t n);

#endif
