/*
 * Names in the order a person counts them: "Task-9" before "Task-10".
 * A group of alike tasks is shown as its first and last name ("12 tasks
 * like this: Task-2 .. Task-13"); taken in the heap walk's order, that
 * read "Task-9 .. Task-3" for 10,000 tasks.
 */
#ifndef COROSCOPE_CLI_NATURAL_ORDER_H
#define COROSCOPE_CLI_NATURAL_ORDER_H

/*
 * <0, 0 or >0 as a comes before, with or after b: runs of ASCII digits
 * compare as the numbers they spell (of any length: no overflow), other
 * bytes as unsigned bytes; equal numbers spelt differently ("07", "7")
 * and the rest equal, by strcmp(), so that only equal strings are equal.
 * NULL (no name) comes after every string.
 */
int natural_cmp(const char *a, const char *b);

#endif
