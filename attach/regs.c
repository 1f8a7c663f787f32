#include "attach/regs.h"

#include "common/le.h"
#include "common/banned.h"

void cs_regs_from_image(struct cs_regs *regs, const void *image)
{
	const unsigned char *p = image;
	size_t i;

	for (i = 0; i < CS_REG_COUNT; i++)
		regs->r[i] = le_u64(p + i * 8);
}
