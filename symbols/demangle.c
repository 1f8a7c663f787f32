#include "symbols/demangle.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "common/banned.h"

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf,
				 size_t *len, int *status);
typedef void (*free_fn)(void *p);

/* Looked up once: 1 found, -1 not available. */
static int state;
static cxa_demangle_fn cxa_demangle;
/* The free of the malloc the demangler calls: the process's own (the C
 * library's, or a sanitizer's that replaces it) where the runtime binds
 * to it; in the static executable the loaded runtime brings a C library
 * of its own, whose heap is not ours. */
static free_fn runtime_free;

static const char *const runtimes[] = {
	"libstdc++.so.6", "libc++abi.so.1", "libc++.so.1",
};

static int load(void)
{
	size_t i;

	if (state)
		return state;
	state = -1;
	for (i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++) {
		void *h = dlopen(runtimes[i], RTLD_LAZY | RTLD_LOCAL);
		void *d, *f;

		if (!h)
			continue;
		d = dlsym(h, "__cxa_demangle");
		/* the global scope first: what the runtime's malloc calls
		 * resolve to; it is empty in the static executable */
		f = dlsym(RTLD_DEFAULT, "free");
		if (!f)
			f = dlsym(h, "free");
		if (d && f) {
			/* a function pointer from dlsym: POSIX's way */
			memcpy(&cxa_demangle, &d, sizeof(d));
			memcpy(&runtime_free, &f, sizeof(f));
			state = 1;
			break;
		}
		dlclose(h);
	}
	return state;
}

char *demangle(const char *name)
{
	char *out, *copy;
	int status = -1;

	/* Itanium C++ ABI names start "_Z" */
	if (!name || strncmp(name, "_Z", 2) ||
	    strnlen(name, DEMANGLE_MAX_IN + 1) > DEMANGLE_MAX_IN ||
	    load() < 0)
		return NULL;
	out = cxa_demangle(name, NULL, NULL, &status);
	if (!out)
		return NULL;
	copy = status == 0 ? strdup(out) : NULL;
	runtime_free(out);
	return copy;
}
