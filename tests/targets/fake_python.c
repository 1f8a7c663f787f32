/*
 * A stand-in for a CPython release coroscope has no layout for, for the
 * "unsupported / unrecognised Python version" tests.
 *
 * Built with -DFAKE_VERSION_HEX=0x036300f0 it looks like a future CPython
 * 3.99.0: it exports Py_Version and a _PyRuntime that starts like the
 * 3.13+ debug offsets (cookie, then PY_VERSION_HEX).  Built without it, it
 * has the interpreter's symbols but no version anywhere.
 *
 * Usage: fake_python READY_FILE -- creates READY_FILE, then sleeps forever.
 */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

struct fake_runtime {
	char cookie[8];
	uint64_t version;
	uint64_t free_threaded;
	char rest[4096];
};

#ifdef FAKE_VERSION_HEX
const unsigned long Py_Version = FAKE_VERSION_HEX;
struct fake_runtime _PyRuntime = { "xdebugpy", FAKE_VERSION_HEX, 0, { 0 } };
#else
struct fake_runtime _PyRuntime;
#endif

void Py_Initialize(void);
void Py_Initialize(void)
{
}

int main(int argc, char **argv)
{
	FILE *f;

	if (argc < 2)
		return 2;
	Py_Initialize();
	f = fopen(argv[1], "w");
	if (!f)
		return 1;
	fclose(f);
	for (;;)
		pause();
}
