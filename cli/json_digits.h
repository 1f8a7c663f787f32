/*
 * Numbers spelled as the JSON writer (cli/json.c) writes them, into
 * room it has made: every address of a dump is a hex string, every line
 * and thread a decimal, and printf's parsing of a format for each cost
 * more than the rest of a value.  Each writes at most its *_ROOM bytes
 * at o (some past the end it returns) and returns the end.
 */
#ifndef COROSCOPE_CLI_JSON_DIGITS_H
#define COROSCOPE_CLI_JSON_DIGITS_H

#include <stdint.h>

#define JSON_HEX_ROOM 20
#define JSON_UINT_ROOM 20

/* v as the string "0x..." with its quotes (lower-case hex digits, "0x0"
 * for 0). */
char *json_digits_hex(char *o, uint64_t v);
/* v in decimal, as "%llu" writes it. */
char *json_digits_uint(char *o, unsigned long long v);

#endif
