/*
 * The classes of the primitives coroscope knows, looked up in the
 * target's modules once per snapshot (py_prim_types_load()): the
 * families' classes in the order they are judged in, and the few types
 * the readers compare objects against (deque, contextlib's ExitStack,
 * gevent's compiled classes).
 */
#include "readers/primitives.h"
#include "readers/primitives_internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "readers/dicts.h"
#include "readers/funcs.h"
#include "common/banned.h"

static const struct {
	const char *mod, *attr, *name;
	enum py_prim_kind kind;
	enum py_prim_family family;
} known[] = {
	/* gevent's first: monkey-patching makes its classes threading's
	 * (threading.Event is gevent.event.Event, _thread.LockType is
	 * gevent.thread.LockType), and they are read as gevent's.
	 * (BoundedSemaphore before Semaphore: a subclass; the Queue's
	 * subclasses named by their own class.) */
	{ "gevent.thread", "LockType", "gevent.thread.LockType", PY_PRIM_LOCK,
	  PY_PRIM_GEVENT },
	{ "gevent.lock", "BoundedSemaphore", "gevent.lock.BoundedSemaphore",
	  PY_PRIM_BOUNDED_SEMAPHORE, PY_PRIM_GEVENT },
	{ "gevent.lock", "Semaphore", "gevent.lock.Semaphore",
	  PY_PRIM_SEMAPHORE, PY_PRIM_GEVENT },
	{ "gevent.lock", "RLock", "gevent.lock.RLock", PY_PRIM_RLOCK,
	  PY_PRIM_GEVENT },
	{ "gevent.event", "Event", "gevent.event.Event", PY_PRIM_EVENT,
	  PY_PRIM_GEVENT },
	{ "gevent.event", "AsyncResult", "gevent.event.AsyncResult",
	  PY_PRIM_EVENT, PY_PRIM_GEVENT },
	{ "gevent.queue", "Queue", "gevent.queue.Queue", PY_PRIM_QUEUE,
	  PY_PRIM_GEVENT },
	{ "gevent.queue", "Channel", "gevent.queue.Channel", PY_PRIM_QUEUE,
	  PY_PRIM_GEVENT },
	{ "asyncio.locks", "Lock", "asyncio.Lock", PY_PRIM_LOCK, PY_PRIM_ASYNCIO },
	{ "asyncio.locks", "Event", "asyncio.Event", PY_PRIM_EVENT,
	  PY_PRIM_ASYNCIO },
	{ "asyncio.locks", "Condition", "asyncio.Condition", PY_PRIM_CONDITION,
	  PY_PRIM_ASYNCIO },
	{ "asyncio.locks", "BoundedSemaphore", "asyncio.BoundedSemaphore",
	  PY_PRIM_BOUNDED_SEMAPHORE, PY_PRIM_ASYNCIO },
	{ "asyncio.locks", "Semaphore", "asyncio.Semaphore", PY_PRIM_SEMAPHORE,
	  PY_PRIM_ASYNCIO },
	{ "asyncio.locks", "Barrier", "asyncio.Barrier", PY_PRIM_BARRIER,
	  PY_PRIM_ASYNCIO },
	{ "asyncio.queues", "Queue", "asyncio.Queue", PY_PRIM_QUEUE,
	  PY_PRIM_ASYNCIO },
	{ "asyncio.subprocess", "Process", "asyncio.subprocess.Process",
	  PY_PRIM_PROCESS, PY_PRIM_ASYNCIO },
	{ "asyncio.streams", "StreamReader", "asyncio.StreamReader",
	  PY_PRIM_STREAM, PY_PRIM_ASYNCIO },
	{ "_thread", "LockType", "threading.Lock", PY_PRIM_LOCK,
	  PY_PRIM_THREADING },
	{ "_thread", "RLock", "threading.RLock", PY_PRIM_RLOCK,
	  PY_PRIM_THREADING },
	{ "threading", "_RLock", "threading.RLock", PY_PRIM_RLOCK,
	  PY_PRIM_THREADING },
	{ "threading", "Event", "threading.Event", PY_PRIM_EVENT,
	  PY_PRIM_THREADING },
	{ "_frozen_importlib", "_ModuleLock", "importlib._ModuleLock",
	  PY_PRIM_IMPORT_LOCK, PY_PRIM_THREADING },
	{ "threading", "Condition", "threading.Condition", PY_PRIM_CONDITION,
	  PY_PRIM_THREADING },
	{ "threading", "BoundedSemaphore", "threading.BoundedSemaphore",
	  PY_PRIM_BOUNDED_SEMAPHORE, PY_PRIM_THREADING },
	{ "threading", "Semaphore", "threading.Semaphore", PY_PRIM_SEMAPHORE,
	  PY_PRIM_THREADING },
	{ "threading", "Barrier", "threading.Barrier", PY_PRIM_BARRIER,
	  PY_PRIM_THREADING },
	{ "threading", "Thread", "threading.Thread", PY_PRIM_THREAD,
	  PY_PRIM_THREADING },
	{ "subprocess", "Popen", "subprocess.Popen", PY_PRIM_PROCESS,
	  PY_PRIM_THREADING },
	{ "multiprocessing.process", "BaseProcess", "multiprocessing.Process",
	  PY_PRIM_PROCESS, PY_PRIM_THREADING },
	/* (MapResult before ApplyResult: a subclass) */
	{ "multiprocessing.pool", "MapResult", "multiprocessing.pool.MapResult",
	  PY_PRIM_POOL_RESULT, PY_PRIM_THREADING },
	{ "multiprocessing.pool", "ApplyResult",
	  "multiprocessing.pool.ApplyResult", PY_PRIM_POOL_RESULT,
	  PY_PRIM_THREADING },
	{ "multiprocessing.pool", "IMapIterator",
	  "multiprocessing.pool.IMapIterator", PY_PRIM_POOL_RESULT,
	  PY_PRIM_THREADING },
	{ "queue", "Queue", "queue.Queue", PY_PRIM_QUEUE, PY_PRIM_THREADING },
	{ "asyncio.tasks", "_GatheringFuture", "asyncio.gather",
	  PY_PRIM_GATHER, PY_PRIM_ASYNCIO },
	{ "concurrent.futures._base", "Future", "concurrent.futures.Future",
	  PY_PRIM_CFUTURE, PY_PRIM_THREADING },
	/* trio's (StrictFIFOLock before Lock: not a subclass of it, but
	 * both of _LockImpl) */
	{ "trio._sync", "Lock", "trio.Lock", PY_PRIM_LOCK, PY_PRIM_TRIO },
	{ "trio._sync", "StrictFIFOLock", "trio.StrictFIFOLock", PY_PRIM_LOCK,
	  PY_PRIM_TRIO },
	{ "trio._sync", "Event", "trio.Event", PY_PRIM_EVENT, PY_PRIM_TRIO },
	{ "trio._sync", "Condition", "trio.Condition", PY_PRIM_CONDITION,
	  PY_PRIM_TRIO },
	{ "trio._sync", "Semaphore", "trio.Semaphore", PY_PRIM_SEMAPHORE,
	  PY_PRIM_TRIO },
	{ "trio._sync", "CapacityLimiter", "trio.CapacityLimiter",
	  PY_PRIM_SEMAPHORE, PY_PRIM_TRIO },
	{ "trio._channel", "MemoryReceiveChannel", "trio.MemoryReceiveChannel",
	  PY_PRIM_QUEUE, PY_PRIM_TRIO },
	{ "trio._channel", "MemorySendChannel", "trio.MemorySendChannel",
	  PY_PRIM_QUEUE, PY_PRIM_TRIO },
	/* anyio's own; its Event and CapacityLimiter are its backend's
	 * classes, each wrapping the backend's own */
	{ "anyio._core._synchronization", "Lock", "anyio.Lock", PY_PRIM_LOCK,
	  PY_PRIM_ANYIO },
	{ "anyio._backends._asyncio", "Event", "anyio.Event", PY_PRIM_EVENT,
	  PY_PRIM_ANYIO },
	{ "anyio._backends._trio", "Event", "anyio.Event", PY_PRIM_EVENT,
	  PY_PRIM_ANYIO },
	{ "anyio._core._synchronization", "Condition", "anyio.Condition",
	  PY_PRIM_CONDITION, PY_PRIM_ANYIO },
	{ "anyio._core._synchronization", "Semaphore", "anyio.Semaphore",
	  PY_PRIM_SEMAPHORE, PY_PRIM_ANYIO },
	{ "anyio._backends._asyncio", "CapacityLimiter", "anyio.CapacityLimiter",
	  PY_PRIM_SEMAPHORE, PY_PRIM_ANYIO },
	{ "anyio._backends._trio", "CapacityLimiter", "anyio.CapacityLimiter",
	  PY_PRIM_SEMAPHORE, PY_PRIM_ANYIO },
	{ "anyio.streams.memory", "MemoryObjectReceiveStream",
	  "anyio.MemoryObjectReceiveStream", PY_PRIM_QUEUE, PY_PRIM_ANYIO },
	{ "anyio.streams.memory", "MemoryObjectSendStream",
	  "anyio.MemoryObjectSendStream", PY_PRIM_QUEUE, PY_PRIM_ANYIO },
	/* tornado's (BoundedSemaphore before Semaphore: a subclass) */
	{ "tornado.locks", "Lock", "tornado.locks.Lock", PY_PRIM_LOCK,
	  PY_PRIM_TORNADO },
	{ "tornado.locks", "Event", "tornado.locks.Event", PY_PRIM_EVENT,
	  PY_PRIM_TORNADO },
	{ "tornado.locks", "BoundedSemaphore", "tornado.locks.BoundedSemaphore",
	  PY_PRIM_BOUNDED_SEMAPHORE, PY_PRIM_TORNADO },
	{ "tornado.locks", "Semaphore", "tornado.locks.Semaphore",
	  PY_PRIM_SEMAPHORE, PY_PRIM_TORNADO },
	{ "tornado.locks", "Condition", "tornado.locks.Condition",
	  PY_PRIM_CONDITION, PY_PRIM_TORNADO },
	{ "tornado.queues", "Queue", "tornado.queues.Queue", PY_PRIM_QUEUE,
	  PY_PRIM_TORNADO },
	/* aiohttp's (its TCPConnector, UnixConnector: their own class) */
	{ "aiohttp.connector", "BaseConnector", "aiohttp.BaseConnector",
	  PY_PRIM_SEMAPHORE, PY_PRIM_AIOHTTP },
};

_Static_assert(sizeof(known) / sizeof(known[0]) <=
	       sizeof(((struct py_prim_types *)0)->type) / sizeof(uint64_t),
	       "room for every known class");

/* The other classes the readers compare objects against, each one
 * module's attribute (3.6's ExitStack, looked up after, where there is
 * no _BaseExitStack). */
static const struct {
	const char *mod, *attr;
	size_t field;     /* its uint64_t in struct py_prim_types */
} others[] = {
	{ "_asyncio", "Future", offsetof(struct py_prim_types, c_future) },
	{ "collections", "deque", offsetof(struct py_prim_types, deque) },
	{ "contextlib", "_BaseExitStack",
	  offsetof(struct py_prim_types, exit_stack) },
	{ "aiohttp.client_reqrep", "ClientResponse",
	  offsetof(struct py_prim_types, aiohttp_response) },
	{ "aiohttp.client", "_BaseRequestContextManager",
	  offsetof(struct py_prim_types, aiohttp_request_cm) },
	{ "aiohttp.connector", "Connection",
	  offsetof(struct py_prim_types, aiohttp_connection) },
	{ "gevent._gevent_c_waiter", "Waiter",
	  offsetof(struct py_prim_types, gevent_waiter) },
	{ "gevent._gevent_cgreenlet", "Greenlet",
	  offsetof(struct py_prim_types, gevent_greenlet) },
	{ "gevent._gevent_c_waiter", "MultipleWaiter",
	  offsetof(struct py_prim_types, gevent_multiwaiter) },
	{ "gevent.queue", "JoinableQueue",
	  offsetof(struct py_prim_types, gevent_joinable) },
	{ "gevent.queue", "Channel",
	  offsetof(struct py_prim_types, gevent_channel) },
};

void py_prim_types_load(struct pyproc *py, struct py_prim_types *t)
{
	const char *mod = NULL;
	uint64_t interp = 0, dict = 0, lock;
	size_t i;

	memset(t, 0, sizeof(*t));
	if (pyproc_interp_head(py, &interp, NULL) < 0)
		interp = 0;
	for (i = 0; interp && i < sizeof(known) / sizeof(known[0]); i++) {
		uint64_t type;

		/* the classes of one module come in a row: its dict is
		 * looked up in sys.modules once */
		if (!mod || strcmp(mod, known[i].mod)) {
			mod = known[i].mod;
			if (pymodule_dict(py, interp, mod, &dict, NULL) != 0)
				dict = 0;
		}
		if (!dict || pydict_get_str(py, dict, known[i].attr, &type,
					    NULL) != 0 || !type ||
		    t->n >= sizeof(t->type) / sizeof(t->type[0]))
			continue;
		t->type[t->n] = type;
		t->kind[t->n] = known[i].kind;
		t->name[t->n] = known[i].name;
		t->family[t->n] = known[i].family;
		t->n++;
	}
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		*(uint64_t *)((char *)t + others[i].field) =
			py_module_attr(py, others[i].mod, others[i].attr);
	if (!t->exit_stack)
		t->exit_stack = py_module_attr(py, "contextlib", "ExitStack");
	t->gevent = prim_gevent_layout(py, t);
	lock = py_module_attr(py, "gevent.thread", "LockType");
	t->gevent_patched = lock &&
			    lock == py_module_attr(py, "_thread", "LockType");
	t->verdicts = xcalloc(1, sizeof(*t->verdicts));
	addrmap_init(t->verdicts);
	if (t->aiohttp_connection) {
		t->aiohttp_verdicts = xcalloc(1, sizeof(*t->aiohttp_verdicts));
		addrmap_init(t->aiohttp_verdicts);
	}
}

void py_prim_types_release(struct py_prim_types *t)
{
	if (t->verdicts) {
		addrmap_release(t->verdicts);
		free(t->verdicts);
	}
	t->verdicts = NULL;
	if (t->aiohttp_verdicts) {
		addrmap_release(t->aiohttp_verdicts);
		free(t->aiohttp_verdicts);
	}
	t->aiohttp_verdicts = NULL;
}
