#include "common/warnings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/banned.h"

/* The last entry of an origin that reached CS_WARNINGS_MAX. */
static const char *const more[CS_WARN_NORIGINS] = {
	[CS_WARN_COLLECTION] = "more warnings not shown",
	[CS_WARN_CORE] = "more warnings about this core not shown",
};

void cs_warnings_init(struct cs_warnings *w)
{
	memset(w, 0, sizeof(*w));
}

void cs_warnings_release(struct cs_warnings *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		free(w->v[i].text);
	free(w->v);
	cs_warnings_init(w);
}

void cs_vwarn(struct cs_warnings *w, enum cs_warn_origin origin,
	      const char *fmt, va_list ap)
{
	struct strbuf sb;
	size_t seen;

	if (!w || (unsigned)origin >= CS_WARN_NORIGINS)
		return;
	seen = w->count[origin]++;
	if (seen > CS_WARNINGS_MAX)
		return;
	strbuf_init(&sb);
	if (seen == CS_WARNINGS_MAX)
		strbuf_addstr(&sb, more[origin]);
	else
		strbuf_vaddf(&sb, fmt, ap);
	if (sb.len > CS_WARNING_MAX) {
		sb.len = CS_WARNING_MAX - 3;
		sb.buf[sb.len] = '\0';
		strbuf_addstr(&sb, "...");
	}
	w->v = xgrow(w->v, &w->alloc, w->n + 1, sizeof(*w->v));
	w->v[w->n].origin = origin;
	w->v[w->n].text = strbuf_detach(&sb);
	w->n++;
}

void cs_warn(struct cs_warnings *w, enum cs_warn_origin origin,
	     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cs_vwarn(w, origin, fmt, ap);
	va_end(ap);
}
