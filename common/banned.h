/*
 * Functions that are easy to misuse with untrusted sizes.  Every .c file
 * includes this header last, after the system headers that declare them,
 * so a use is a compile error rather than a review comment.
 */
#ifndef COROSCOPE_COMMON_BANNED_H
#define COROSCOPE_COMMON_BANNED_H

#define BANNED(func) sorry_##func##_is_banned

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef atoi
#define atoi(x) BANNED(atoi)
#undef atol
#define atol(x) BANNED(atol)
#undef gets
#define gets(x) BANNED(gets)

#endif
