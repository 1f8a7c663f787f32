/*
 * `coroscope --version`: the version, and the build id of the running
 * executable, so that a copy found in a container or a wheel can be
 * matched to the build it came from.
 */
#ifndef COROSCOPE_CLI_VERSION_H
#define COROSCOPE_CLI_VERSION_H

#include <stdio.h>

/*
 * Print "coroscope VERSION" and "build id HEX (statically linked)" (or
 * "dynamically linked"; "build id none" when the link left none out).
 */
void cli_print_version(FILE *out);

#endif
