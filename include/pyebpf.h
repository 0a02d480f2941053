/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Types shared by the BPF sampler (bpf/sample.bpf.c) and the loader (user/).
 * Fixed-width types and arrays only: no pointers, bool or long, so both sides
 * agree on the layout; _Static_asserts catch drift.
 */
#ifndef PYEBPF_H
#define PYEBPF_H

#ifdef __BPF__
/* vmlinux.h provides __u32/__u64 */
#else
#include <linux/types.h>
#endif
#include "pyebpf_arch.h"

#define PYEBPF_COMM_LEN 16
/* Frames per kernel or user stack: the kernel's own cap for bpf_get_stack. */
#define PYEBPF_MAX_STACK 127

enum pyebpf_event_type {
	PYEBPF_EVENT_SAMPLE = 1,
	PYEBPF_EVENT_EXEC = 2, /* a process replaced its image: drop its caches */
	PYEBPF_EVENT_EXIT = 3, /* the last thread of a process exited */
	/* --mode wall/off-cpu, at the stop: a process with a thread still off the
	 * CPU that was never sampled. Userspace looks at it (is it Python?)
	 * before the stop flush reads its stacks. A pyebpf_proc_event. */
	PYEBPF_EVENT_BLOCKED = 4,
	/* A process that became a target as it was forked (-p's children, --comm):
	 * userspace registers it at once (a forked Python is Python from its
	 * first instruction), not at its first sample. A pyebpf_proc_event. */
	PYEBPF_EVENT_FORK = 5,
	/* --mode memory: a target gave address space back, or moved it (a
	 * pyebpf_mem_event): what the samples of that range grew is held no more. */
	PYEBPF_EVENT_MEM = 6,
	/* Bytes of a Python process's memory as a sample found them (a
	 * pyebpf_mem_copy): the parts of a code object its frames are named
	 * from, sent before a sample that may be its process's last (a wait's
	 * end, memory growth) for each code object not sent before. Userspace
	 * reads them only if the process is gone when it names the sample. */
	PYEBPF_EVENT_MEM_COPY = 7,
};

struct pyebpf_event_header {
	__u32 type; /* enum pyebpf_event_type */
	__u32 pid;  /* process id (tgid) in the initial pid namespace */
	__u32 tid;
	__u32 cpu;
	__u64 ts_ns; /* bpf_ktime_get_ns() */
};

/* Python frames per sample; a power of two (indexes are masked for the verifier). */
#define PYEBPF_MAX_PY_FRAMES 1024

/* Flags of a sample. */
#define PYEBPF_SAMPLE_KSTACK_ERR 0x1     /* kernel stack could not be read */
#define PYEBPF_SAMPLE_USTACK_ERR 0x2     /* user stack could not be read */
#define PYEBPF_SAMPLE_PY 0x4             /* a registered Python process: py fields are valid */
#define PYEBPF_SAMPLE_PY_TRUNCATED 0x8   /* more Python frames than PYEBPF_MAX_PY_FRAMES */
#define PYEBPF_SAMPLE_GIL_KNOWN 0x10     /* the GIL state could be read */
#define PYEBPF_SAMPLE_GIL_HELD 0x20      /* the sampled thread holds the GIL */
#define PYEBPF_SAMPLE_UREGS 0x40         /* --native: user registers and stack bytes follow */
#define PYEBPF_SAMPLE_PY_LOOP 0x80       /* the frame chain led back into itself: cut there */
#define PYEBPF_SAMPLE_OFFCPU 0x100       /* --mode wall/off-cpu: time off the CPU (see struct pyebpf_offcpu) */
#define PYEBPF_SAMPLE_RUNNING_CORO 0x200 /* running_task holds a coroutine, not a task (3.11–3.13) */
#define PYEBPF_SAMPLE_MEM 0x400          /* --mode memory: anonymous memory mapped in (see struct pyebpf_memgrow) */
#define PYEBPF_SAMPLE_CTX 0x800          /* ctx holds what the thread's context variables say */

/*
 * A Python frame: the code object and the byte offset of its current
 * instruction. Userspace reads the code object later, when it may be gone:
 * a module's code dies as its import ends, and its address is soon another
 * code object's. So a frame of code that dies young (module, class body,
 * exec'd code: the frames with a locals dict) also says which code object
 * it was, by a check of what names it (name, file, first line) that
 * userspace compares with the code object it reads. Functions' frames (no
 * locals dict) carry none: their code lives as long as the function.
 */
struct pyebpf_pyframe {
	__u64 code;
	__u64 globals; /* the frame's f_globals: with code, tells a reused code address apart */
	__s32 lasti;   /* byte offset into co_code; negative: not started */
	__u32 flags;   /* PYEBPF_PYFRAME_* in the low byte, the code's check above it */
};
/* The first frame an evaluation loop ran after being entered from C. */
#define PYEBPF_PYFRAME_ENTRY 0x1
/* A module's code (or code exec'd in globals): its locals are its globals. */
#define PYEBPF_PYFRAME_MODULE 0x2
/* The 24-bit check of the frame's code object in flags (0: not read). */
#define PYEBPF_PYFRAME_CHECK_SHIFT 8
#define PYEBPF_PYFRAME_CHECK(flags) ((flags) >> PYEBPF_PYFRAME_CHECK_SHIFT)

/*
 * The check of a code object, from what names it: its name and file
 * pointers and its first line. Both sides compute it, BPF at the sample and
 * userspace from the code object it reads; never 0. Pointers are 8-byte
 * aligned: their low bits carry nothing.
 */
static inline __u32 pyebpf_code_check(__u64 name, __u64 file, __s32 firstlineno)
{
	__u64 h = (name >> 3) * 0x9E3779B97F4A7C15ULL;

	h ^= (file >> 3) * 0xC2B2AE3D27D4EB4FULL;
	h ^= (__u64)(__u32)firstlineno * 0x165667B19E3779F9ULL;
	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ULL;
	h ^= h >> 32;
	h &= 0xffffff;
	return h ? (__u32)h : 1;
}

/* Why a Python stack is empty or short (pyebpf_sample.py_error). */
enum pyebpf_py_error {
	PYEBPF_PY_OK = 0,
	PYEBPF_PY_NO_TSTATE,    /* the thread has no PyThreadState (not a Python thread) */
	PYEBPF_PY_READ_INTERP,  /* reading the interpreter list failed */
	PYEBPF_PY_READ_FRAME,   /* reading a frame failed: the stack ends there */
	PYEBPF_PY_NO_OFFSETS,   /* no offsets for this interpreter */
	PYEBPF_PY_THREAD_LIMIT, /* the thread lists are longer than a walk, and the thread is not indexed yet */
};

/*
 * The thread states of a Python process, indexed by userspace (which walks
 * its thread lists whole) for threads a BPF walk does not reach: a thread
 * list longer than MAX_THREADS, or one walked for each of thousands of
 * blocked threads at the stop. Key of py_tstate_index; the value is the
 * thread state's address. A thread with thread states in several
 * interpreters is left out, and BPF consults the index only while the
 * process has one interpreter (the walk decides which is current).
 */
struct pyebpf_tstate_key {
	__u32 pid;
	__u32 reserved;
	__u64 thread_id; /* tstate->thread_id: pthread_self() (bpf/arch.bpf.h) */
};

/*
 * --mode wall/off-cpu: what an off-CPU sample stands for. Why the thread
 * waited is decided in userspace (user/offcpu.c) from what the kernel saw
 * when it left the CPU.
 */
struct pyebpf_offcpu {
	__u64 since_ns; /* when it left the CPU (clipped to the recording's start) */
	__u64 wait_arg; /* first argument of the syscall in progress: a futex address, nfds... */
	__u32 weight;   /* timer ticks this sample stands for; on-CPU samples: 1 */
	__s32 syscall;  /* syscall number (pyebpf_arch.h) in progress when it left, -1: none */
	__u32 state;    /* task state when it left; 0: still runnable (preempted) */
	__u32 flags;    /* PYEBPF_OFFCPU_* */
};
#define PYEBPF_OFFCPU_STATE_UNKNOWN 0x1 /* off the CPU since before the recording: state not seen */
#define PYEBPF_OFFCPU_AT_STOP 0x2       /* still off the CPU when recording stopped */

/*
 * --mode memory: the growth a sample was taken in. Memory is sampled by
 * bytes (bpf/memory.bpf.c): a sample point falls every PYEBPF_MEM_* bytes
 * on average of the anonymous memory a target maps in; a page (or huge
 * page) that holds `points` of them is one sample, worth points x the
 * sampling bytes. `points` sits where an off-CPU sample's weight does:
 * a lost record counts what it stood for either way.
 */
struct pyebpf_memgrow {
	__u64 addr;   /* where the memory was mapped in (its page's start) */
	__u64 bytes;  /* how much: a page, or a huge page */
	__u32 points; /* sample points in it (>= 1) */
	__u32 reserved[3];
};

/* PYEBPF_EVENT_MEM_COPY: len bytes from addr in process h.pid. */
#define PYEBPF_MEM_COPY_MAX 512
struct pyebpf_mem_copy {
	struct pyebpf_event_header h;
	__u64 addr;
	__u32 len; /* <= PYEBPF_MEM_COPY_MAX */
	__u32 reserved;
	__u8 data[PYEBPF_MEM_COPY_MAX];
};

/* PYEBPF_EVENT_MEM: what a target did to its address space. */
enum pyebpf_mem_op {
	PYEBPF_MEM_UNMAP = 1,  /* munmap(start, len) */
	PYEBPF_MEM_ADVISE = 2, /* madvise(start, len, MADV_DONTNEED and kin): the pages are dropped */
	PYEBPF_MEM_BRK = 3,    /* brk moved down: [start, start + len) given back */
	PYEBPF_MEM_MOVE = 4,   /* mremap: [start, start + len) is now at `to`, to_len long */
};
struct pyebpf_mem_event {
	struct pyebpf_event_header h;
	__u64 start, len;
	__u64 to, to_len; /* PYEBPF_MEM_MOVE */
	__u32 op;         /* enum pyebpf_mem_op */
	__u32 reserved;
};

/*
 * What a sample read of its thread's context variables (bpf/context.bpf.h):
 * the current OpenTelemetry span's ids, copied at the sample (the span may
 * be gone when userspace looks), and the first bytes of the --context-label
 * variable's value.
 */
#define PYEBPF_CTX_LABEL_BYTES 128 /* a str header and a uuid, or 72 characters of a free-threaded build */
#define PYEBPF_CTX_NAME_BYTES 96   /* a str header and 48 characters or more */
#define PYEBPF_TRACE_DIGITS 5      /* 30-bit digits of a 128-bit id */
#define PYEBPF_SPAN_DIGITS 3       /* ... of a 64-bit id */
struct pyebpf_ctx_read {
	__u64 vars;  /* the thread's variables (tstate->context->ctx_vars, a HAMT); 0: none */
	__u64 span;  /* the span current in them; 0: none found */
	__u64 label; /* the --context-label variable's value; 0: not set */
	__u32 trace_digits[PYEBPF_TRACE_DIGITS]; /* least significant first */
	__u32 span_digits[PYEBPF_SPAN_DIGITS];
	__u32 parent_digits[PYEBPF_SPAN_DIGITS]; /* the span's parent's span id */
	__u8 trace_len, span_len, parent_len;    /* digits read; 0: no ids (no parent) */
	__u8 flags;                              /* PYEBPF_CTX_* */
	/* The span's name's first bytes (a str object): the SDK's spans die as
	 * they end, often before userspace could read them. */
	__u8 name_raw[PYEBPF_CTX_NAME_BYTES];
	__u8 label_raw[PYEBPF_CTX_LABEL_BYTES]; /* the label value's first bytes */
};
#define PYEBPF_CTX_PARENT_REMOTE 0x1 /* the parent is another process's span: this is a local root */
#define PYEBPF_CTX_NAME 0x2          /* name_raw holds the span's name object's bytes */
#define PYEBPF_CTX_KNOWN 0x4         /* a span userspace named (py_spans_known): its id alone was read */

struct pyebpf_sample {
	struct pyebpf_event_header h;
	__u64 cgroup_id;
	/* The process's name: its thread-group leader's, so that a process is
	 * one process whichever thread was sampled (3.14+ copy each Python
	 * thread's name into its OS thread name). */
	char comm[PYEBPF_COMM_LEN];
	char task_comm[PYEBPF_COMM_LEN]; /* the sampled thread's own name */
	__u32 kstack_len;                /* frames in stack[0 .. kstack_len) , leaf first */
	__u32 ustack_len;                /* frames in stack[kstack_len .. +ustack_len), leaf first */
	__u32 flags;
	__u32 py_len; /* Python frames in py[], leaf first */
	__u64 tstate; /* the sampled thread's PyThreadState, 0 if none */
	/* 3.14+: the asyncio task running on the thread (its thread state's
	 * asyncio_running_task), 0 if none or not known for this version.
	 * 3.11–3.13 (PYEBPF_SAMPLE_RUNNING_CORO): the coroutine whose frame
	 * is the outermost that C entered as a generator's (a task's step
	 * sends to its coroutine from C); userspace knows its task. */
	__u64 running_task;
	__u32 py_error;             /* enum pyebpf_py_error */
	__u32 py_cycle;             /* PYEBPF_SAMPLE_PY_LOOP: frames in the loop the chain ends in */
	struct pyebpf_ctx_read ctx; /* PYEBPF_SAMPLE_CTX */
	union {
		struct pyebpf_offcpu off;  /* on and off the CPU */
		struct pyebpf_memgrow mem; /* PYEBPF_SAMPLE_MEM */
	};
	/* Only the used part travels: the whole stack[] and py[0 .. py_len) for
	 * a Python process, stack[0 .. kstack_len + ustack_len) otherwise. */
	__u64 stack[2 * PYEBPF_MAX_STACK];
	struct pyebpf_pyframe py[PYEBPF_MAX_PY_FRAMES];
};

/*
 * --native: the user registers at the sample and a copy of the user stack
 * from sp up, for unwinding offline with DWARF CFI (as perf --call-graph
 * dwarf does). They follow the Python frames, at PYEBPF_PY_SAMPLE_SIZE(py_len)
 * (py_len is 0 for other processes); `copied` stack bytes follow this struct.
 */
#define PYEBPF_MAX_USTACK_COPY 65536
struct pyebpf_uregs {
	__u64 pc, sp;
	__u64 more[PYEBPF_UREGS_MORE_MAX]; /* PYEBPF_UREGS_MORE's registers, in its order (pyebpf_arch.h) */
	__u32 copied;                      /* stack bytes from sp that follow */
	__u32 reserved;
};
/* The sampler's per-CPU buffer: a sample and room for the native tail. */
struct pyebpf_sample_buf {
	struct pyebpf_sample s;
	struct pyebpf_uregs regs;                  /* only a placeholder: the tail moves with py_len */
	__u8 stack[PYEBPF_MAX_USTACK_COPY + 4096]; /* + a page: bounds the copy loop for the verifier */
};

struct pyebpf_proc_event {
	struct pyebpf_event_header h;
	char comm[PYEBPF_COMM_LEN];
};

/* Bytes of a sample without Python frames that carries n native frames. */
#define PYEBPF_SAMPLE_SIZE(n) (__builtin_offsetof(struct pyebpf_sample, stack) + (__u64)(n)*8)
/* Bytes of a Python sample with n Python frames. */
#define PYEBPF_PY_SAMPLE_SIZE(n) \
	(__builtin_offsetof(struct pyebpf_sample, py) + (__u64)(n) * sizeof(struct pyebpf_pyframe))

/*
 * How the BPF walker reads one CPython layout. Userspace fills one record
 * per distinct layout (user/python/offsets.c) in the py_offsets array map.
 */
enum pyebpf_frame_kind {
	PYEBPF_FRAMES_OBJECT = 1, /* <= 3.10: PyFrameObject, f_back, f_lasti */
	PYEBPF_FRAMES_311 = 2,    /* 3.11: _PyInterpreterFrame, is_entry byte */
	PYEBPF_FRAMES_312 = 3,    /* 3.12+: _PyInterpreterFrame, owner byte (>= 3: C-stack shim) */
};
enum pyebpf_gil_kind {
	PYEBPF_GIL_NONE = 0,
	PYEBPF_GIL_TSTATE_CURRENT = 1,  /* <= 3.11: a global holds the GIL holder's tstate */
	PYEBPF_GIL_INTERP_PTR = 2,      /* 3.12: interp->ceval.gil points at the GIL */
	PYEBPF_GIL_INTERP_EMBEDDED = 3, /* 3.13+: the GIL is inside the interpreter state */
};
#define PYEBPF_NO_OFFSET 0xffffffffu
#define PYEBPF_MAX_FRAME_READ 128 /* bytes of a frame read at once */

struct pyebpf_py_offsets {
	__u32 frame_kind; /* enum pyebpf_frame_kind */
	__u32 gil_kind;   /* enum pyebpf_gil_kind */
	__u32 interp_next;
	__u32 interp_threads_head;
	__u32 tstate_next;
	__u32 tstate_interp;
	__u32 tstate_thread_id;     /* pthread_self() of the thread */
	__u32 tstate_frame;         /* frame (<= 3.10), cframe (3.11, 3.12), current_frame (3.13+) */
	__u32 cframe_current_frame; /* 3.11, 3.12; else PYEBPF_NO_OFFSET */
	__u32 frame_back;           /* f_back / previous */
	__u32 frame_code;           /* f_code / f_executable */
	__u32 frame_lasti;          /* f_lasti (int) / prev_instr / instr_ptr */
	__u32 frame_owner;          /* 3.11 is_entry, 3.12+ owner; else PYEBPF_NO_OFFSET */
	__u32 frame_read_size;      /* bytes covering all the frame fields above */
	__u32 lasti_mult;           /* <= 3.10: bytes per f_lasti unit (3.10: 2) */
	__u32 code_adaptive;        /* 3.11+: offsetof(PyCodeObject, co_code_adaptive) */
	__u32 gil_off;              /* GIL_INTERP_*: the gil pointer's / struct's offset in interp */
	__u32 gil_locked;           /* GIL_INTERP_*: offsets in the gil struct */
	__u32 gil_holder;
	__u32 executable_mask; /* low bits to clear in frame_code (3.14 tagged refs) */
	__u32 frame_globals;   /* f_globals */
	__u32 tstate_status;   /* 3.12+: the _status bit field (bit 4: active); else PYEBPF_NO_OFFSET */
	/* Free-threaded 3.14+: each thread runs its own copy of a code
	 * object's bytecode, so an instruction offset is relative to
	 * co_tlbc->entries[frame->tlbc_index]; 0 on other builds. */
	__u32 code_tlbc;
	__u32 frame_tlbc_index;
	/* 3.14+: _PyThreadStateImpl.asyncio_running_task (the .AsyncioDebug
	 * section's, checked against it); 0: not read. */
	__u32 tstate_running_task;
	/* 3.11–3.13: offsetof(PyGenObject, gi_iframe), where a coroutine
	 * embeds its frame (a frame's owner byte 1: a generator's; 3.11 keeps
	 * it right after is_entry); 0: no running coroutine read. */
	__u32 gen_iframe;
	__u32 frame_locals; /* f_locals: NULL in a function's frame, f_globals in a module's */
	/* The code object's fields its check is made of (pyebpf_code_check):
	 * co_qualname (3.11+) or co_name, co_filename, co_firstlineno; read in
	 * one piece of at most PYEBPF_MAX_CODE_READ bytes from the first of
	 * them. code_check_len 0: not read (the frames carry no check). */
	__u32 code_name;
	__u32 code_filename;
	__u32 code_firstlineno;
	__u32 code_check_len;
	/* What a copy of a code object (PYEBPF_EVENT_MEM_COPY) takes: the
	 * bytes from its start that cover every field userspace names a frame
	 * from (0: no copies), and where its line table's pointer is
	 * (co_linetable, co_lnotab before 3.10). */
	__u32 code_copy_len;
	__u32 code_linetable;
	/* Context variables (3.7+; docs/requests.md): PyThreadState.context
	 * (0: not read), where an object's type is (its header is 8 bytes
	 * more), a tuple's items, an int's size word and digits, and
	 * PYEBPF_CTXL_* for the dict and int formats. */
	__u32 tstate_context;
	__u32 obj_type;
	__u32 tuple_items;
	__u32 long_size;
	__u32 long_digits;
	__u32 ctx_layout;
};
#define PYEBPF_CTXL_DICT_311 0x1    /* 3.11+ dict keys (dk_log2_index_bytes, dk_kind); else 3.6's */
#define PYEBPF_CTXL_LONG_TAGGED 0x2 /* 3.12+ lv_tag: digits = tag >> 3; else ob_size */
#define PYEBPF_MAX_CODE_READ 96

/* How a span keeps its `_context` (struct pyebpf_py_ctx.span_how): from
 * the span, the pointer at span_off (signed) ... */
enum pyebpf_attr_how {
	PYEBPF_ATTR_NONE = 0,
	PYEBPF_ATTR_VALUES = 1, /* ... is a values array (3.11; 3.12 stores it + 1, tagged): [index] */
	PYEBPF_ATTR_INLINE = 2, /* ... at span_off is the values array itself (3.13+): [index] */
	PYEBPF_ATTR_DICT = 3,   /* ... is a split dict: its ma_values[index] (<= 3.10) */
	PYEBPF_ATTR_TAGGED = 4, /* as VALUES, stored as values - 1 (3.12: odd, else a dict) */
};

/* Value of the py_ctx map (key: pid): what userspace found in a process
 * that reads its requests (user/python/context_vars.c). */
struct pyebpf_py_ctx {
	__u64 otel_var;                                /* OpenTelemetry's ContextVar current_context; 0: none */
	__u64 label_var;                               /* --context-label's ContextVar; 0: none */
	__u64 bitmap_type, array_type, collision_type; /* the HAMT's node types (0: not seen yet) */
	__u64 span_key;                                /* the str keying the span in a Context dict */
	__u64 spanctx_type;                            /* SpanContext, a tuple subclass */
	__s32 otel_hash, label_hash;                   /* the variables' HAMT hashes */
	__s32 span_off;
	__u32 span_how;     /* enum pyebpf_attr_how */
	__u32 span_index;   /* the span's _context among its values */
	__u32 dict_values;  /* ATTR_DICT: ma_values in the dict; else values[] in a PyDictValues */
	__u32 name_index;   /* _name's index + 1; 0: not read */
	__u32 parent_index; /* _parent's index + 1; 0: not read */
	/* The generation of py_spans_known's entries for this process that
	 * hold: userspace moves it on when it forgets the spans it named. */
	__u32 known_gen;
	__u32 reserved;
};

/*
 * Key of py_spans_known: a span userspace has named (its name, parent and
 * trace kept by span id, request_labels.c). BPF then reads only the span's
 * id of a sample of it, not its trace id, name and parent again: 11 of the
 * ~25 reads of a labelled sample. Its value: the py_ctx known_gen it was
 * named under.
 */
struct pyebpf_span_key {
	__u32 pid;
	__u32 zero;
	__u64 span; /* the span id */
};

/* Value of the py_procs map (key: pid): where this process's interpreter state is. */
struct pyebpf_py_proc {
	__u64 interp_head_addr; /* address of the pointer to the first interpreter */
	__u64 gil_addr;         /* GIL_TSTATE_CURRENT: address of the current tstate pointer */
	__u32 offsets_id;       /* index into py_offsets */
	__u32 version_hex;      /* PY_VERSION_HEX */
	__u32 tp_to_self;       /* pthread_self() = the thread pointer - this (0 on x86-64; pyebpf_arch.h) */
	__u32 reserved;
};
#define PYEBPF_MAX_OFFSETS 32

/*
 * Every path where the sampler gives up on a sample, or part of one, has a
 * counter (a per-CPU array indexed by this enum); userspace prints the
 * non-zero ones. PYEBPF_CNT_SAMPLES counts samples sent.
 */
enum pyebpf_counter {
	PYEBPF_CNT_SAMPLES,         /* samples handed to the ring buffer */
	PYEBPF_CNT_RB_FULL,         /* samples dropped (ticks: a record's weight): ring buffer full */
	PYEBPF_CNT_KSTACK_ERR,      /* kernel stack unreadable (sample kept) */
	PYEBPF_CNT_USTACK_ERR,      /* user stack unreadable (sample kept) */
	PYEBPF_CNT_SCRATCH_ERR,     /* per-CPU scratch lookup failed (sample dropped) */
	PYEBPF_CNT_TARGETS_FULL,    /* a forked child could not be added to the targets */
	PYEBPF_CNT_PROC_RB_FULL,    /* exec/exit event dropped: ring buffer full */
	PYEBPF_CNT_PY_NO_TSTATE,    /* Python process, thread without thread state */
	PYEBPF_CNT_PY_READ_INTERP,  /* interpreter/thread list unreadable */
	PYEBPF_CNT_PY_READ_FRAME,   /* a frame unreadable: Python stack cut there */
	PYEBPF_CNT_PY_TRUNCATED,    /* Python stack deeper than PYEBPF_MAX_PY_FRAMES */
	PYEBPF_CNT_PY_NO_OFFSETS,   /* registered process with no offsets record */
	PYEBPF_CNT_USTACK_COPY_ERR, /* --native: the user stack could not be copied */
	PYEBPF_CNT_PY_LOOP,         /* a Python frame chain looped (marked [frame loop]) */
	PYEBPF_CNT_OFFCPU,          /* off-CPU samples sent (intervals worth at least one tick) */
	PYEBPF_CNT_OFFCPU_STORAGE,  /* a thread's off-CPU state could not be stored (interval lost) */
	PYEBPF_CNT_PY_THREAD_LIMIT, /* a thread beyond the walk's reach, not indexed yet (Python stack missing) */
	PYEBPF_CNT_FOLLOWED,        /* processes that became targets while recording (children, --comm) */
	PYEBPF_CNT_NOT_FOLLOWED,    /* processes started by a target, left out by --no-children */
	PYEBPF_CNT_TAKEN,           /* timer samples taken (sent or lost: the BPF work was done) */
	PYEBPF_CNT_TAKEN_NS,        /* nanoseconds of BPF those took (a sum, not a count) */
	PYEBPF_CNT_SKIPPED,         /* timer ticks skipped: a sample's BPF outlasted the period */
	PYEBPF_CNT_SKIPPED_LOST,    /* ... not given to the next sample (another thread ran next): lost */
	PYEBPF_CNT_MEM_BYTES,       /* --mode memory: bytes of anonymous memory the targets mapped in (a sum) */
	PYEBPF_CNT_MEM_TAKEN,       /* memory samples taken (sent or lost) */
	PYEBPF_CNT_MEM_TAKEN_NS,    /* nanoseconds of BPF those took (a sum) */
	PYEBPF_CNT_MEM_EVENT_LOST,  /* address space given back or moved, not told: ring buffer full */
	PYEBPF_CNT_COPY_LOST,       /* a copy of a code object not sent: ring buffer full */
	PYEBPF_CNT__COUNT,
};

#ifndef __BPF__
_Static_assert(sizeof(struct pyebpf_event_header) == 24, "header layout");
_Static_assert(sizeof(struct pyebpf_pyframe) == 24, "pyframe layout");
_Static_assert(sizeof(struct pyebpf_offcpu) == 32, "offcpu layout");
_Static_assert(sizeof(struct pyebpf_sample) ==
		       24 + 8 + 16 + 16 + 16 + 16 + 8 + 296 + 32 + 2UL * 127 * 8 + 24UL * PYEBPF_MAX_PY_FRAMES,
	       "sample layout");
_Static_assert(sizeof(struct pyebpf_py_offsets) == 39UL * 4, "py offsets layout");
_Static_assert(sizeof(struct pyebpf_ctx_read) == 72 + PYEBPF_CTX_NAME_BYTES + PYEBPF_CTX_LABEL_BYTES,
	       "ctx read layout");
_Static_assert(sizeof(struct pyebpf_py_ctx) == 96, "py ctx layout");
_Static_assert(sizeof(struct pyebpf_span_key) == 16, "span key layout");
_Static_assert(sizeof(struct pyebpf_mem_copy) == 40 + PYEBPF_MEM_COPY_MAX, "mem copy layout");
_Static_assert(sizeof(struct pyebpf_py_proc) == 32, "py proc layout");
_Static_assert(sizeof(struct pyebpf_proc_event) == 40, "proc event layout");
_Static_assert(sizeof(struct pyebpf_memgrow) == sizeof(struct pyebpf_offcpu), "memgrow layout");
_Static_assert(__builtin_offsetof(struct pyebpf_memgrow, points) == __builtin_offsetof(struct pyebpf_offcpu, weight),
	       "a memory sample's points are where a sample's weight is");
_Static_assert(sizeof(struct pyebpf_mem_event) == 64, "mem event layout");
_Static_assert(sizeof(struct pyebpf_uregs) == 120, "uregs layout");
#endif

#endif /* PYEBPF_H */
