/*
 * The writers of a `coroscope run` dump: the text report on stderr, the
 * JSON file of --report, and the short Markdown section for a GitHub
 * job page (GITHUB_STEP_SUMMARY).
 */
#ifndef COROSCOPE_CLI_RUN_REPORT_H
#define COROSCOPE_CLI_RUN_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "cli/collect.h"
#include "cli/run_causes.h"
#include "cli/run_sample.h"
#include "cli/run_tree.h"

/* A process of a dump, dumped or only listed. */
struct run_proc {
	struct proc_entry e;
	char *command;             /* its command line (owned), or NULL */
	int dumped;                /* c holds a collection */
	struct collection c;
	struct cs_err err;         /* why not, when !dumped */
};

/* One dump of the tree, as the writers see it. */
struct run_dump {
	const char *why;           /* "command timed out after 2s"... */
	int timed_out;
	char **argv;               /* the command */
	const struct run_proc *procs;
	size_t n, npy;             /* processes, and how many are dumped */
	const struct run_summary *sum;
	/* The samples taken before the dump, or NULL (none taken). */
	const struct run_sampler *sampler;
	int all;                   /* --all: alike lines not grouped */
};

/* The report on out (stderr), causes first. */
void run_report_text(FILE *out, const struct run_dump *d);
/* The JSON document into path; failures are reported on stderr. */
void run_report_json(const char *path, const struct run_dump *d);
/* Append the Markdown section to path; failures are reported on stderr. */
void run_report_step_summary(const char *path, const struct run_dump *d);

#endif
