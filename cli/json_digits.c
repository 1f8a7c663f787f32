#include "cli/json_digits.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/banned.h"

_Static_assert(JSON_HEX_ROOM >= 3 + 16 + 1, "a quote, 0x, 16 digits, a quote");
_Static_assert(JSON_UINT_ROOM >= 20, "the digits of 2^64 - 1");

#if defined(__SSE2__) && defined(__x86_64__)
/* The sixteen hex digits of v, most significant first: its bytes in
 * that order, each split into its two nibbles (the high one first),
 * then '0' added, and 'a' - '0' - 10 more where the nibble is above 9.
 * A dozen vector instructions (SSE2 is part of x86-64). */
static inline void hex16(char *out, uint64_t v)
{
	const __m128i low4 = _mm_set1_epi8(0x0f);
	__m128i b = _mm_cvtsi64_si128((long long)__builtin_bswap64(v));
	__m128i nib = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(b, 4),
						      low4),
					_mm_and_si128(b, low4));
	__m128i above9 = _mm_cmpgt_epi8(nib, _mm_set1_epi8(9));

	nib = _mm_add_epi8(nib, _mm_set1_epi8('0'));
	nib = _mm_add_epi8(nib, _mm_and_si128(above9,
					      _mm_set1_epi8('a' - '0' - 10)));
	memcpy(out, &nib, 16);
}
#else
/* The eight hex digits of x, most significant first, as the bytes of a
 * little-endian word: each nibble spread into a byte of its own, then
 * '0' added, and 'a' - '0' - 10 more where the nibble is above 9. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "hex8() builds its digits in a little-endian word");

static inline uint64_t hex8(uint32_t x)
{
	uint64_t w = x, above9;

	w = ((w & 0xffff0000u) << 16) | (w & 0x0000ffffu);
	w = ((w & 0x0000ff000000ff00u) << 8) | (w & 0x000000ff000000ffu);
	w = ((w & 0x00f000f000f000f0u) << 4) | (w & 0x000f000f000f000fu);
	/* Now byte k holds nibble k counted from the least significant. */
	above9 = ((w + 0x0606060606060606u) >> 4) & 0x0101010101010101u;
	w += 0x3030303030303030u + above9 * ('a' - '0' - 10);
	return __builtin_bswap64(w);
}

static inline void hex16(char *out, uint64_t v)
{
	uint64_t digits[2] = { hex8((uint32_t)(v >> 32)), hex8((uint32_t)v) };

	memcpy(out, digits, 16);
}
#endif

char *json_digits_hex(char *o, uint64_t v)
{
	size_t n = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1;

	/* "0x%llx" by hand: a dump writes an id for every task and frame.
	 * The digits that count are shifted to the top, so that all
	 * sixteen are written at once and the n first ones kept. */
	o[0] = '"';
	o[1] = '0';
	o[2] = 'x';
	hex16(o + 3, v << (4 * (16 - n)));
	o[3 + n] = '"';
	return o + 4 + n;
}

/* Two decimal digits at a time: "00" to "99". */
static const char digit_pairs[200] =
	"0001020304050607080910111213141516171819"
	"2021222324252627282930313233343536373839"
	"4041424344454647484950515253545556575859"
	"6061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* The count of v's decimal digits: about 1233 / 4096 (log10 2) of its
 * bit length, and one more where it reaches the next power of ten.  (v
 * | 1 has the digits of v, 0 and 1 alike.) */
static inline size_t decimal_len(unsigned long long v)
{
	static const unsigned long long pow10[20] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull,
		1000000ull, 10000000ull, 100000000ull, 1000000000ull,
		10000000000ull, 100000000000ull, 1000000000000ull,
		10000000000000ull, 100000000000000ull, 1000000000000000ull,
		10000000000000000ull, 100000000000000000ull,
		1000000000000000000ull, 10000000000000000000ull,
	};
	unsigned long long u = v | 1;
	size_t t = (size_t)(64 - __builtin_clzll(u)) * 1233 >> 12;

	return t + (u >= pow10[t]);
}

/* Two at a time from the last, without printf's parsing of a format. */
char *json_digits_uint(char *o, unsigned long long v)
{
	char *end = o + decimal_len(v), *e = end;

	while (v >= 100) {  /* at most ten rounds */
		e -= 2;
		memcpy(e, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(e - 2, digit_pairs + 2 * v, 2);
	else
		e[-1] = (char)('0' + v);
	return end;
}
