/*
 * The one-line reasons attach/live_errors.c gives: here, why a thread
 * did not stop in time, from its state.
 */
#include "attach/live_internal.h"

#include <string.h>

#include "tests/unit/check.h"

int main(void)
{
	CHECK(strstr(live_stop_hint('D'), "uninterruptible"), "D: asleep");
	CHECK(strstr(live_stop_hint('R'), "no CPU"), "R: starved");
	CHECK(strstr(live_stop_hint(0), "unknown"), "gone or unreadable");
	CHECK(!strstr(live_stop_hint('S'), "uninterruptible") &&
	      !strstr(live_stop_hint('S'), "CPU"), "S: neither");
	return CHECK_DONE("test_live_errors");
}
