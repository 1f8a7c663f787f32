/*
 * The version table: every CPython struct offset, size and enum value a
 * reader needs, one struct py_layout per minor version.
 *
 * Readers never test the version: the table carries the differences.  An
 * offset of -1 means "this member does not exist in this version"; a
 * reader that needs it takes the other path the table allows (for
 * example ts_frame vs ts_cframe vs ts_current_frame).
 *
 * 3.6 - 3.13 tables are generated from the installed builds' DWARF by
 * tools/gen-layouts.py into readers/layouts_generated.c (do not edit it by
 * hand; tests/test_layouts.py regenerates and compares).  The 3.14 and
 * 3.14t (free-threaded, a table of its own) tables
 * were generated the same way from a 3.14.7 built from source outside the
 * repository (`--prefix`); machines without that build keep them as
 * committed.  For 3.13+ the
 * members that _Py_DebugOffsets describes are overwritten at run time from
 * the target's own copy after validation (readers/debug_offsets.c).
 *
 * Each comment names the C member the offset comes from: "Type.member" or
 * "Type.a.b" for nested members.  All offsets are in bytes.
 */
#ifndef COROSCOPE_READERS_LAYOUT_H
#define COROSCOPE_READERS_LAYOUT_H

#include <stdint.h>

/*
 * A gs_* state that the version does not have: 3.6 - 3.9 keep no state,
 * only 3.13+ has SUSPENDED_YIELD_FROM.  Not -1, which is a real state
 * (FRAME_SUSPENDED in 3.10 - 3.12).
 */
#define PY_GEN_STATE_NONE (-100)

/* How an instance finds its attribute dict (PyObject_GenericGetAttr). */
enum py_dict_mode {
	PY_DICT_OFFSET = 0,     /* 3.6 - 3.10: dict pointer at tp_dictoffset */
	PY_DICT_VALUES_311 = 1, /* 3.11: values ptr at obj-32, dict at obj-24 */
	PY_DICT_TAGGED_312 = 2, /* 3.12: obj-24 holds dict, or values-1
				   (odd: bit 0 set) */
	PY_DICT_INLINE_313 = 3, /* 3.13+: values inline at tp_basicsize,
				   managed dict at obj-24 */
};

/* How the GC-tracked objects are found (readers/gc.c). */
enum py_gc_kind {
	PY_GC_LISTS = 0,     /* PyGC_Head generation lists */
	PY_GC_MIMALLOC = 1,  /* free-threaded: no lists, walk the mimalloc
				heaps of every thread and the abandoned pool */
};

/* Which line table format code objects carry. */
enum py_linetable_kind {
	PY_LNOTAB = 0,     /* 3.6 - 3.9 co_lnotab, f_lasti in bytes */
	PY_LINETABLE_310,  /* 3.10 co_linetable, f_lasti in code units */
	PY_LOCATIONS_311,  /* 3.11+ location table */
};

struct py_layout {
	int major, minor;       /* 3, X */
	int free_threaded;      /* Py_GIL_DISABLED build (3.13t+): a table of
				   its own, chosen by _Py_DebugOffsets */

	/* _PyRuntimeState (3.7+) */
	int rt_size;                     /* sizeof(_PyRuntimeState) */
	int rt_interpreters_head;        /* .interpreters.head */
	int rt_gilstate_tstate_current;  /* .gilstate.tstate_current (3.7-3.11) */
	int rt_gc;                       /* .gc (3.7, 3.8): struct _gc_runtime_state */

	/* PyInterpreterState (struct _is) */
	int is_size;
	int is_next;              /* .next */
	int is_tstate_head;       /* .tstate_head (<=3.10), .threads.head (3.11+) */
	int is_id;                /* .id (3.7+) */
	int is_modules;           /* .modules (<=3.11), .imports.modules (3.12+) */
	int is_sysdict;           /* .sysdict */
	int is_gc;                /* .gc (3.9+) */
	int is_ceval_gil;         /* .ceval.gil pointer (3.12+) */
	int is_asyncio_tasks_head;/* .asyncio_tasks_head (3.14): tasks left
				     by exited threads */

	/* struct _gil_runtime_state (3.12+, reached through is_ceval_gil) */
	int gil_last_holder;      /* .last_holder */
	int gil_locked;           /* .locked (read as int32) */

	/* struct _gc_runtime_state: the GC generations */
	int gc_generations;       /* .generations */
	int gc_generation_size;   /* sizeof(struct gc_generation) */
	int gc_gen_head;          /* gc_generation.head: a PyGC_Head */
	int gc_head_size;         /* sizeof(PyGC_Head) */
	int gc_head_next;         /* PyGC_Head._gc_next / gc.gc_next */
	int gc_head_prev;         /* PyGC_Head._gc_prev / gc.gc_prev */
	int gc_permanent_generation; /* .permanent_generation (3.8+) */

	/* Free-threaded builds: GC objects live in mimalloc heaps
	   (Include/internal/pycore_mimalloc.h, Include/internal/mimalloc/
	   mimalloc/types.h); all -1 in a default build */
	int rt_allocators_debug;  /* _PyRuntimeState.allocators
				     .is_debug_enabled, int */
	int is_mi_abandoned_pool; /* .mimalloc.abandoned_pool */
	int ts_mi_heaps;          /* _PyThreadStateImpl.mimalloc.heaps[] */
	int ts_mi_initialized;    /* _PyThreadStateImpl.mimalloc.initialized */
	int mi_heap_size;         /* sizeof(mi_heap_t) */
	int mi_heap_pages;        /* mi_heap_t.pages[]: mi_page_queue_t */
	int mi_heap_queues;       /* number of page queues (MI_BIN_FULL + 1) */
	int mi_queue_size;        /* sizeof(mi_page_queue_t) */
	int mi_queue_first;       /* mi_page_queue_t.first */
	int mi_heap_delayed_free; /* mi_heap_t.thread_delayed_free */
	int mi_heap_page_count;   /* mi_heap_t.page_count, size_t */
	int mi_page_size;         /* sizeof(mi_page_t) */
	int mi_page_slice_count;  /* mi_page_t.slice_count, uint32 */
	int mi_page_tag_bit;      /* bit position of mi_page_t.tag (4 bits) */
	int mi_page_capacity;     /* .capacity, uint16 */
	int mi_page_reserved;     /* .reserved, uint16 */
	int mi_page_free;         /* .free */
	int mi_page_used;         /* .used, uint32 */
	int mi_page_block_size;   /* .xblock_size, uint32 */
	int mi_page_local_free;   /* .local_free */
	int mi_page_thread_free;  /* .xthread_free (low 2 bits: flags) */
	int mi_page_heap;         /* .xheap */
	int mi_page_next;         /* .next */
	int mi_seg_abandoned_next;/* mi_segment_t.abandoned_next */
	int mi_seg_slice_entries; /* mi_segment_t.slice_entries, size_t */
	int mi_seg_thread_id;     /* mi_segment_t.thread_id */
	int mi_seg_slices;        /* mi_segment_t.slices[]: mi_page_t */
	int mi_pool_visited;      /* mi_abandoned_pool_t.abandoned_visited */
	int mi_pool_abandoned;    /* mi_abandoned_pool_t.abandoned (tagged) */
	int mi_segment_shift;     /* MI_SEGMENT_SHIFT: segments are 1<<this
				     bytes and aligned to it */
	int mi_slice_shift;       /* MI_SEGMENT_SLICE_SHIFT */
	int mi_heap_gc;           /* _Py_MIMALLOC_HEAP_GC: heaps[] index */
	int mi_heap_gc_pre;       /* _Py_MIMALLOC_HEAP_GC_PRE */
	int mi_gc_pre_size;       /* bytes before objects of the GC_PRE heap
				     (managed dict and weakref slots) */
	int ob_gc_bits;           /* PyObject.ob_gc_bits, uint8 (bit 0:
				     tracked) */

	/* PyThreadState (struct _ts) */
	int ts_size;
	int ts_next;              /* .next */
	int ts_interp;            /* .interp */
	int ts_frame;             /* .frame (<=3.10): PyFrameObject * */
	int ts_cframe;            /* .cframe (3.11, 3.12) */
	int ts_current_frame;     /* .current_frame (3.13+) */
	int ts_thread_id;         /* .thread_id (pthread_t) */
	int ts_native_thread_id;  /* .native_thread_id (3.11+) */
	int ts_dict;              /* .dict: the running loop before 3.13 */
	int ts_asyncio_running_loop; /* _PyThreadStateImpl
				     .asyncio_running_loop (3.13+) */
	int ts_asyncio_tasks_head;/* _PyThreadStateImpl.asyncio_tasks_head
				     (3.14): llist of the thread's C tasks */

	/* _PyCFrame (3.11, 3.12) */
	int cf_current_frame;     /* .current_frame */

	/* PyFrameObject (struct _frame) */
	int f_size;
	int f_back;               /* .f_back (<=3.10) */
	int f_code;               /* .f_code (<=3.10) */
	int f_lasti;              /* .f_lasti (<=3.10), int */
	int f_lineno;             /* .f_lineno, int */
	int f_localsplus;         /* .f_localsplus (<=3.10) */
	int f_valuestack;         /* .f_valuestack (<=3.10) */
	int f_stacktop;           /* .f_stacktop (<=3.9) */
	int f_stackdepth;         /* .f_stackdepth (3.10), int */
	int f_state;              /* .f_state (3.10), signed char */
	int f_executing;          /* .f_executing (3.6 - 3.9), char */
	int f_frame;              /* .f_frame (3.11+): _PyInterpreterFrame * */
	int f_iblock;             /* .f_iblock (<=3.10), int */
	int f_blockstack;         /* .f_blockstack (<=3.10): PyTryBlock[] */

	/* _PyInterpreterFrame (3.11+) */
	int if_size;
	int if_code;              /* .f_code (3.11, 3.12), .f_executable (3.13+) */
	int if_previous;          /* .previous */
	int if_funcobj;           /* .f_func (3.11), .f_funcobj (3.12+) */
	int if_locals;            /* .f_locals */
	int if_frame_obj;         /* .frame_obj */
	int if_prev_instr;        /* .prev_instr (3.11, 3.12) */
	int if_instr_ptr;         /* .instr_ptr (3.13+) */
	int if_stacktop;          /* .stacktop (3.11 - 3.13), int */
	int if_stackpointer;      /* .stackpointer (3.14) */
	int if_owner;             /* .owner, char */
	int if_is_entry;          /* .is_entry (3.11 only), bool: the first
				     frame its C eval call runs */
	int if_localsplus;        /* .localsplus */

	/* PyCodeObject */
	int co_size;
	int co_argcount;          /* int */
	int co_posonlyargcount;   /* int (3.8+) */
	int co_kwonlyargcount;    /* int */
	int co_nlocals;           /* int */
	int co_nlocalsplus;       /* int (3.11+) */
	int co_flags;             /* int */
	int co_firstlineno;       /* int */
	int co_stacksize;         /* int */
	int co_exceptiontable;    /* bytes (3.11+) */
	int co_code;              /* bytes (<=3.10) */
	int co_code_adaptive;     /* inline bytecode (3.11+) */
	int co_varnames;          /* tuple (<=3.10) */
	int co_cellvars;          /* tuple (<=3.10) */
	int co_freevars;          /* tuple (<=3.10) */
	int co_localsplusnames;   /* tuple (3.11+) */
	int co_localspluskinds;   /* bytes (3.11+) */
	int co_filename;          /* str */
	int co_name;              /* str */
	int co_qualname;          /* str (3.11+) */
	int co_lnotab;            /* bytes (<=3.9) */
	int co_linetable;         /* bytes (3.10+) */
	int co_firsttraceable;    /* ._co_firsttraceable, int (3.11+) */
	int co_tlbc;              /* .co_tlbc (free-threaded): _PyCodeArray *,
				     {Py_ssize_t size; char *entries[]} */

	/* PyObject, PyVarObject */
	int ob_refcnt;
	int ob_type;
	int ob_size;              /* PyVarObject.ob_size */

	/* PyTypeObject, PyHeapTypeObject */
	int tp_name;              /* const char * */
	int tp_basicsize;         /* Py_ssize_t */
	int tp_flags;             /* unsigned long */
	int tp_dictoffset;        /* Py_ssize_t */
	int tp_base;              /* PyTypeObject * */
	int tp_dict;              /* PyObject * (NULL for 3.12+ static types) */
	int tp_mro;               /* tuple of types */
	int ht_cached_keys;       /* PyHeapTypeObject.ht_cached_keys */
	int ht_qualname;          /* PyHeapTypeObject.ht_qualname: str */
	int managed_dict_back;    /* bytes before an object of its managed
				     dict pointer (3.11+; 0 before) */

	/* PyModuleObject */
	int module_dict;          /* .md_dict */

	/* Unicode: PyASCIIObject, PyCompactUnicodeObject */
	int u_length;             /* PyASCIIObject.length */
	int u_state;              /* PyASCIIObject.state (a bitfield word) */
	int u_state_kind_shift;   /* bit position of state.kind (3 bits) */
	int u_state_compact_shift;/* bit position of state.compact */
	int u_state_ascii_shift;  /* bit position of state.ascii */
	int u_ascii_size;         /* sizeof(PyASCIIObject): ASCII data follows */
	int u_compact_size;       /* sizeof(PyCompactUnicodeObject) */

	/* PyBytesObject */
	int bytes_sval;           /* .ob_sval */

	/* PyLongObject */
	int long_digits;          /* .ob_digit / .long_value.ob_digit */
	int long_tag;             /* .long_value.lv_tag (3.12+), else -1
				     (then ob_size holds sign and count) */
	int long_digit_bits;      /* PYLONG_BITS_IN_DIGIT, 30 */

	/* PyFloatObject */
	int float_fval;           /* .ob_fval */

	/* PyTupleObject, PyListObject */
	int tuple_items;          /* .ob_item */
	int list_items;           /* .ob_item (PyObject **) */

	/* PyDictObject, PyDictKeysObject, PyDictValues */
	int dict_used;            /* .ma_used */
	int dict_keys;            /* .ma_keys */
	int dict_values;          /* .ma_values */
	int dk_size;              /* .dk_size, Py_ssize_t (<=3.10) */
	int dk_log2_size;         /* .dk_log2_size, uint8 (3.11+) */
	int dk_log2_index_bytes;  /* .dk_log2_index_bytes, uint8 (3.11+) */
	int dk_kind;              /* .dk_kind, uint8 (3.11+): 0 general,
				     1 unicode, 2 split */
	int dk_nentries;          /* .dk_nentries, Py_ssize_t */
	int dk_indices;           /* .dk_indices */
	int dk_entry_size;        /* sizeof(PyDictKeyEntry) */
	int dk_unicode_entry_size;/* sizeof(PyDictUnicodeEntry) (3.11+) */
	int dv_values;            /* PyDictValues.values (3.11+); 0 before */

	/* PySetObject */
	int set_used;             /* .used */
	int set_mask;             /* .mask */
	int set_table;            /* .table */
	int set_entry_size;       /* sizeof(setentry) */

	/* PyCellObject */
	int cell_ref;             /* .ob_ref */

	/* collections.deque: dequeobject, its items in a chain of blocks
	 * of BLOCKLEN = (block_rightlink - block_data) / 8 pointers */
	int deque_leftblock;      /* dequeobject.leftblock */
	int deque_leftindex;      /* .leftindex: the first item's slot */
	int deque_state;          /* .state: one more at each append and
				     each pop (so state - size counts the
				     pops, twice) */
	int block_data;           /* block.data */
	int block_rightlink;      /* .rightlink */

	/* queue.SimpleQueue (Modules/_queuemodule.c, an extension module:
	 * read from its own DWARF), what a ThreadPoolExecutor's jobs wait
	 * in from 3.9.  Up to 3.12 its items are lst[lst_pos:]; from 3.13
	 * a ring: num_items items from items[get_idx], wrapping at
	 * items_cap. */
	int sq_lst;               /* simplequeueobject.lst (list) */
	int sq_lst_pos;           /* .lst_pos */
	int sq_items;             /* .buf.items (PyObject **) */
	int sq_get_idx;           /* .buf.get_idx */
	int sq_items_cap;         /* .buf.items_cap */
	int sq_num_items;         /* .buf.num_items */

	/* A socket object of the _socket module (Modules/socketmodule.h,
	 * an extension module: read from its own DWARF), whose fd is
	 * visible from no Python attribute: gevent's sockets wrap one. */
	int sock_fd;              /* PySocketSockObject.sock_fd */

	/* multiprocessing's locks and semaphores: the _multiprocessing
	 * module's SemLock (an extension module: its own DWARF), a POSIX
	 * semaphore's address in this process and what this process did
	 * with it, which no Python attribute shows. */
	int semlock_handle;       /* SemLockObject.handle (sem_t *) */
	int semlock_last_tid;     /* .last_tid: the ident of the thread that
				     acquired it last */
	int semlock_count;        /* .count: acquires less releases, this
				     process's (int) */
	int semlock_maxvalue;     /* .maxvalue (int) */
	int semlock_kind;         /* .kind (int): 0 RECURSIVE_MUTEX (an
				     RLock), 1 SEMAPHORE */

	/* PyGenObject / PyCoroObject / PyAsyncGenObject share these */
	int gen_size;
	int gen_frame;            /* .gi_frame (<=3.10) */
	int gen_running;          /* .gi_running (<=3.9), char */
	int gen_code;             /* .gi_code (<=3.11) */
	int gen_name;             /* .gi_name */
	int gen_qualname;         /* .gi_qualname */
	int gen_iframe;           /* .gi_iframe (3.11+) */
	int gen_frame_state;      /* .gi_frame_state, signed char (3.11+) */
	int agen_running_async;   /* PyAsyncGenObject.ag_running_async (3.8+) */
	int coro_origin;          /* PyCoroObject.cr_origin or cr_origin_or_finalizer */

	/* _asyncio module (from the _asyncio extension's DWARF) */
	int fut_loop;             /* FutureObj.fut_loop */
	int fut_callback0;        /* .fut_callback0 (3.7+) */
	int fut_context0;         /* .fut_context0 (3.7+) */
	int fut_callbacks;        /* .fut_callbacks */
	int fut_result;           /* .fut_result */
	int fut_state;            /* .fut_state (enum, int) */
	int fut_exception;        /* .fut_exception */
	int fut_log_tb_bit;       /* .fut_log_tb: its bit from the struct's
				     start (an int before 3.12? a 1-bit
				     field since: either way its lowest bit) */
	int fut_awaited_by;       /* .fut_awaited_by (3.14) */
	int fut_size;             /* sizeof(FutureObj) */
	int task_fut_waiter;      /* TaskObj.task_fut_waiter */
	int task_coro;            /* .task_coro */
	int task_name;            /* .task_name (3.8+) */
	int task_context;         /* .task_context (3.7+) */
	int task_size;            /* sizeof(TaskObj) */
	int task_node;            /* .task_node (3.14) */
	int task_num_cancels;     /* .task_num_cancels_requested (3.11+):
				     cancel() calls no uncancel() undid */
	int taskwakeup_task;      /* TaskWakeupMethWrapper.ww_task (<=3.9) */
	int futureiter_future;    /* futureiterobject.future */
	int asend_gen;            /* PyAsyncGenASend.ags_gen */
	int corowrapper_coro;     /* PyCoroWrapper.cw_coroutine */
	int method_self;          /* PyMethodObject.im_self */
	int cfunction_self;       /* PyCFunctionObject.m_self */
	int descr_method;         /* PyMethodDescrObject.d_method */
	int weakref_object;       /* PyWeakReference.wr_object */
	int func_closure;         /* PyFunctionObject.func_closure (tuple) */
	int partial_fn;           /* functools.partial partialobject.fn */
	int partial_args;         /* functools.partial partialobject.args */
	int exc_args;             /* PyBaseExceptionObject.args (tuple) */
	int exc_traceback;        /* PyBaseExceptionObject.traceback */
	int exc_cause;            /* .cause, __cause__ (a process pool's
				     job's _RemoteTraceback) */
	int exc_group_excs;       /* PyBaseExceptionGroupObject.excs: the
				     group's exceptions, a tuple (3.11+) */
	int tb_next;              /* PyTracebackObject.tb_next */
	int tb_frame;             /* .tb_frame: PyFrameObject * */
	int tb_lasti;             /* .tb_lasti, int: bytes into the code */
	int tb_lineno;            /* .tb_lineno, int (-1: from tb_lasti) */
	int lock_locked;          /* _thread.lock lockobject.locked (char,
				     <= 3.12) or .lock (PyMutex, 3.13+):
				     bit 0 is set while it is held */
	int rlock_owner;          /* rlockobject.rlock_owner (<= 3.13) or
				     .lock.thread (_PyRecursiveMutex) */
	int rlock_count;          /* .rlock_count or .lock.level */
	int rlock_count_base;     /* added to the stored count: 0 where it
				     is rlock_count, 1 where it is
				     _PyRecursiveMutex.level (3.14), which
				     counts re-entries only */

	/* Behaviour that is not an offset: one place each. */
	enum py_dict_mode dict_mode;
	enum py_gc_kind gc_kind;
	enum py_linetable_kind linetable;
	int tpflags_managed_dict; /* Py_TPFLAGS_MANAGED_DICT, 0 if none */
	int tpflags_inline_values;/* Py_TPFLAGS_INLINE_VALUES, 0 if none */
	int stackref_tag_mask;    /* low bits to clear from localsplus (3.14) */
	int call_null_below;      /* every bound callable is called with
				     NULL in the slot below it (3.11, 3.12) */
	int owner_generator;      /* FRAME_OWNED_BY_GENERATOR */
	int owner_cstack;         /* FRAME_OWNED_BY_CSTACK, -1 if none */
	int owner_interpreter;    /* FRAME_OWNED_BY_INTERPRETER (3.14), -1 */
	/* generator frame states (gi_frame_state / f_state);
	   PY_GEN_STATE_NONE where the version has no such state */
	int gs_created, gs_suspended, gs_suspended_yield_from,
	    gs_executing, gs_completed, gs_cleared;
	int fast_local, fast_cell, fast_free, fast_hidden; /* CO_FAST_* bits,
							      0 if none */
	int co_flags_generator, co_flags_coroutine, co_flags_async_generator,
	    co_flags_iterable_coroutine;
	int op_yield_from;        /* YIELD_FROM (<=3.10), -1 after */
	int op_resume, op_resume_quick, op_instrumented_resume,
	    op_resume_check;      /* RESUME and variants (3.11+), -1 if none */
	int op_extended_arg;
	/* where a with statement calls __enter__ (-1 if none): a frame
	   stopped there is acquiring its context manager, not holding it */
	int op_setup_with, op_setup_async_with;   /* <=3.10 */
	int op_before_with, op_before_async_with; /* 3.11 - 3.13 */
	int op_load_special;                      /* 3.14: precedes CALL */
	int op_push_exc_info, op_with_except_start; /* a with's handler
						      starts with them */
};

/* The generated tables: the one for a minor version and build (default
 * or free-threaded), or NULL. */
const struct py_layout *py_layout_for(int major, int minor,
				      int free_threaded);

/*
 * Readers copy a remote struct into a local buffer of this many bytes
 * before decoding it.  The sizes they copy come from the table, and for
 * 3.13+ from the target itself, so py_layout_check() refuses a layout
 * whose structs would not fit (CS_ERR_UNSUPPORTED) before any reader runs.
 */
#define PY_LAYOUT_MAX_STRUCT 1024

struct cs_err;
int py_layout_check(const struct py_layout *L, struct cs_err *err);

#endif
