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

struct json {
	FILE *out;
	int depth;
	int need_comma[JSON_MAX_DEPTH];
	int pretty;
	size_t len;              /* bytes waiting in buf */
	char buf[JSON_BUF];
};

void json_init(struct json *j, FILE *out, int pretty);
void json_begin_object(struct json *j);
void json_end_object(struct json *j);
void json_begin_array(struct json *j);
void json_end_array(struct json *j);
void json_key(struct json *j, const char *key);
void json_string(struct json *j, const char *s);   /* NULL -> null */
void json_int(struct json *j, long long v);
void json_uint(struct json *j, unsigned long long v);
void json_double(struct json *j, double v);
void json_bool(struct json *j, int v);
void json_null(struct json *j);
/* Write s as a JSON string body (no quotes) to f. */
void json_escape(FILE *f, const char *s);

#endif
