/*
 * Between the JSON writer (cli/json.c) and the parts of a document made
 * on another thread (cli/json_part.c, declared in cli/json.h): what
 * each calls of the other.
 */
#ifndef COROSCOPE_CLI_JSON_PART_H
#define COROSCOPE_CLI_JSON_PART_H

#include "cli/json.h"

/* Hand j's buffer on: to out, to the writer thread, or, in a part, to
 * the part's chunks (json_part_next_chunk()). */
void json_flush(struct json *j);
/* json_flush() of a part: keep the full chunk, go on in a new one. */
void json_part_next_chunk(struct json *j);

#endif
