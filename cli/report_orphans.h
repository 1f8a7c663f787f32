/*
 * "Generators and coroutines not owned by a task (N):" of the text
 * report (after the tasks' trees and await cycles, cli/report_tasks.c).
 */
#ifndef COROSCOPE_CLI_REPORT_ORPHANS_H
#define COROSCOPE_CLI_REPORT_ORPHANS_H

#include <stdio.h>

#include "cli/report.h"

/* Nothing when every generator has its task; with locals, each chain
 * alone with its frames' locals. */
void report_text_orphans(FILE *out, const struct collection *c, int locals);

#endif
