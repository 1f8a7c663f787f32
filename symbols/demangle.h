/*
 * C++ names made readable: "_ZN2ns6Waiter4waitEi" -> "ns::Waiter::wait(int)".
 *
 * The demangler is the C++ runtime's own (__cxa_demangle, from
 * libstdc++), looked up at run time with dlopen so that coroscope links
 * no C++ runtime and the static executable still builds; where the
 * runtime cannot be loaded, names stay mangled.  Names come from the
 * target's files: a name longer than DEMANGLE_MAX_IN is not demangled
 * (the runtime's demangler recurses on nesting).
 */
#ifndef COROSCOPE_SYMBOLS_DEMANGLE_H
#define COROSCOPE_SYMBOLS_DEMANGLE_H

#define DEMANGLE_MAX_IN 4096

/*
 * The demangled form of a mangled C++ name ("_Z..."), malloc'd (the
 * caller frees it), or NULL: not a mangled name, not valid, too long,
 * or no demangler on this machine.
 */
char *demangle(const char *name);

#endif
