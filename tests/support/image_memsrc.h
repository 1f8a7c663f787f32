/*
 * A memory source over a byte image (for the unit tests and fuzz
 * harnesses of the readers): the image's bytes are the target's memory
 * from IMAGE_BASE on; every other address is unmapped.
 */
#ifndef COROSCOPE_TESTS_SUPPORT_IMAGE_MEMSRC_H
#define COROSCOPE_TESTS_SUPPORT_IMAGE_MEMSRC_H

#include <stddef.h>
#include <stdint.h>

#include "attach/memsrc.h"

#define IMAGE_BASE 0x10000000ull

struct image {
	const uint8_t *data;
	size_t size;
};

/* The ops of a memsrc whose backend is a struct image. */
extern const struct memsrc_ops image_ops;

#endif
