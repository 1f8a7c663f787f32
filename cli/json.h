/*
 * A small streaming JSON writer: keeps track of commas and nesting so
 * callers write keys and values in order.  Strings are escaped; invalid
 * UTF-8 from the target is replaced, so the output always parses.
 */
#ifndef COROSCOPE_CLI_JSON_H
#define COROSCOPE_CLI_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

/* Output is buffered here and reaches out when the top-level value is
 * closed (or the buffer fills): write nothing else to out meanwhile. */
#define JSON_BUF 65536
/* A writer thread's blocks (see json_background()): each hand-over can
 * wake a thread, which costs tens of microseconds in a VM. */
#define JSON_WRITER_BLOCK ((size_t)((size_t)1 << 20))

struct json_writer;
struct json_part;

struct json {
	FILE *out;
	int depth;
	int need_comma[JSON_MAX_DEPTH];
	int pretty;
	/* What a value at this depth starts on a line with: the newline and
	 * its spaces (pretty, below the top level), or nothing.  Kept with
	 * depth, since every value and key writes it. */
	size_t indent;
	size_t len;              /* bytes waiting in buf */
	char *buf;               /* own, or a block of the writer's */
	size_t cap;              /* its size */
	int background;          /* start a writer at the first full buf */
	struct json_writer *writer;  /* cli/json_writer.h, or NULL */
	struct json_part *part;  /* this writes a part (see below), or NULL */
	unsigned long flushes;   /* times buf was handed on (cli/json_memo.c) */
	char own[JSON_BUF];
};

void json_init(struct json *j, FILE *out, int pretty);
/*
 * The same on the heap (free() it), for a writer of a whole document: a
 * struct json on the stack faulted in 16 new stack pages for its own
 * buffer, some 12 us each in a VM, where malloc's heap is on huge pages
 * faulted in already (common/hugeheap.h).
 */
struct json *json_new(FILE *out, int pretty);
/* A document that may be large: once it fills its first buffer, a
 * thread writes it while the rest is made (cli/json_writer.h); closing
 * the top-level value waits for the last byte.  A write error sets
 * ferror(out), as a direct write would. */
void json_background(struct json *j);
void json_begin_object(struct json *j);
void json_end_object(struct json *j);
void json_begin_array(struct json *j);
void json_end_array(struct json *j);
/*
 * json_key(j, "name"): a key spelled in coroscope's source.  Only a
 * string literal compiles (the "" pasted around it), so it is written
 * as it is, without a scan: a literal holds no byte that needs escaping
 * (tests/unit/test_json.c checks every key the sources write).  Any
 * other key -- a target's variable name, a key chosen at run time --
 * goes through json_key_str(), which escapes it.
 */
#define json_key(j, lit) json_key_lit((j), JSON_KEY_ARGS(lit))
/* The quoted literal and its length (its space included), as the two
 * arguments of json_key_lit() and the others. */
#define JSON_KEY_ARGS(lit)                                                  \
	"\"" lit "\": " JSON_KEY_PAD,                                        \
	sizeof(lit) - 1 + 4 +                                               \
	0 * sizeof(char[sizeof(lit) <= JSON_MAX_KEY ? 1 : -1])
/* The quoted key is copied as a block of JSON_MAX_KEY + 4 bytes, one
 * move of a constant size: the padding keeps that inside the literal. */
#define JSON_KEY_PAD "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0" \
		     "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0" \
		     "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
#define JSON_MAX_KEY 48
void json_key_lit(struct json *j, const char *quoted, size_t n);
/*
 * A key spelled in the source (as json_key()) and its value, in one
 * call: what nearly every member of a dump is, and the same bytes as
 * json_key() and then the value's own call.
 *   json_key_int(j, "line", v)       json_int()
 *   json_key_addr(j, "id", v)        json_hex(), or null for 0 (no object)
 *   json_key_string(j, "name", s)    json_string() (NULL -> null)
 */
#define json_key_int(j, lit, v) json_key_lit_int((j), JSON_KEY_ARGS(lit), (v))
#define json_key_addr(j, lit, v)                                            \
	json_key_lit_addr((j), JSON_KEY_ARGS(lit), (v))
#define json_key_string(j, lit, s)                                          \
	json_key_lit_string((j), JSON_KEY_ARGS(lit), (s))
void json_key_lit_int(struct json *j, const char *quoted, size_t n,
		      long long v);
void json_key_lit_addr(struct json *j, const char *quoted, size_t n,
		       uint64_t v);
void json_key_lit_string(struct json *j, const char *quoted, size_t n,
			 const char *s);
void json_key_str(struct json *j, const char *key);
void json_string(struct json *j, const char *s);   /* NULL -> null */
void json_int(struct json *j, long long v);
void json_uint(struct json *j, unsigned long long v);
void json_double(struct json *j, double v);
void json_bool(struct json *j, int v);
void json_null(struct json *j);
/* v as the string "0x..." (lower-case hex digits, "0x0" for 0). */
void json_hex(struct json *j, uint64_t v);
/* n bytes of JSON made by this writer earlier at the same place (see
 * cli/json_memo.h), copied as they are; need is what need_comma at this
 * depth was after them. */
void json_raw(struct json *j, const char *s, size_t n, int need);
/*
 * A value that differs from one copy of a kept run to the next (see
 * json_memo_write_holes()): an address or a number, each of which may
 * be missing.
 */
enum json_hole_kind {
	JSON_HOLE_ADDR,  /* addr as json_hex(), null for 0 (no object) */
	JSON_HOLE_NUM,   /* num as json_int(), null below 0 (no line) */
	JSON_HOLE_INT,   /* num as json_int() */
};
struct json_hole {
	enum json_hole_kind kind;
	uint64_t addr;
	long long num;
};
/* h as a value (after a key: holes follow keys). */
void json_hole(struct json *j, const struct json_hole *h);
/* n + 1 runs of bytes made by this writer earlier at the same place,
 * end to end at s, len[i] bytes each (total in all), with h[i] written
 * after the i-th (each run but the last ends with a key); need as in
 * json_raw().  A
 * short run is copied as a block of JSON_RAW_BLOCK bytes: as many past
 * the end of s must be readable (what cli/json_memo.c keeps has that). */
#define JSON_RAW_BLOCK 32
void json_raw_holes(struct json *j, const char *s, size_t total,
		    const uint16_t *len, const struct json_hole *h, size_t n,
		    int need);
/* Write s as a JSON string body (no quotes) to f. */
void json_escape(FILE *f, const char *s);

/*
 * A part of the document made by another thread while this one writes
 * what comes before it: json_part_start(j, fn, arg) runs fn(part, arg)
 * on a thread, writing into memory as the members (or elements) that
 * follow others at j's current level; json_part_join(j, p) waits for it
 * and appends its bytes.  Between the two, the caller writes whole
 * members at that level only, so that at the join j is where the part
 * assumed: at the same level, after at least one member.  fn may only
 * read what no thread changes meanwhile.  Without a thread (none could
 * start), fn runs at the join, into j.  The output is the same bytes
 * either way.
 */
typedef void json_part_fn(struct json *j, const void *arg);
/*
 * Whether a part is worth a thread here, with `at_once` parts made at
 * the same time.  With three CPUs or more, always.  With two, the one
 * besides the maker is the writer thread's whenever the document goes to
 * a file or a pipe (the kernel's copy into the page cache), and a part
 * competes with it; and a part's chunks wait for the join, each a
 * freshly faulted 2 MiB, unless memory already paid for is kept
 * (common/hugeheap.h).  So only one part at a time, and only while
 * enough is kept for most of its chunks.
 */
int json_parts_worth_it(int at_once);
struct json_part *json_part_start(const struct json *j, json_part_fn *fn,
				  const void *arg);
/*
 * A part made by the thread that makes `after` (just started with
 * json_part_start(), at the same level), once that one is done: where a
 * thread of its own would only take turns with the others (two CPUs).
 * The join of `after` makes it instead, on the joining thread, when it
 * finds `after` still being made and this one not begun.  Joined after
 * `after`; on a thread of its own when `after` has already ended (or was
 * itself made after another), and at the join when `after` has no
 * thread.
 */
struct json_part *json_part_start_after(const struct json *j,
					struct json_part *after,
					json_part_fn *fn, const void *arg);
void json_part_join(struct json *j, struct json_part *p);

#endif
