// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/threadname.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "python/frames.h"
#include "python/procmem.h"

#define MAX_WALK 4096
#define MAX_ENTRIES 8192 /* sys.modules of a large service: a thousand or two */

struct reader {
	pid_t pid;
	const struct py_layout *l;
};

static uint64_t rd(const struct reader *r, uint64_t addr)
{
	uint64_t v = 0;

	procmem_u64(r->pid, addr, &v);
	return v;
}

static uint8_t rd8(const struct reader *r, uint64_t addr)
{
	uint8_t v = 0;

	procmem_read(r->pid, addr, &v, 1);
	return v;
}

/*
 * Whether a str object is `want`, remembered by (pid, object, want): the
 * attribute names an instance dict holds are interned strings, the same
 * objects in every Thread of a process, and a stop with thousands of
 * blocked threads would read each of them thousands of times. A string
 * freed and its address reused within a process is possible but rare, and
 * costs a thread name.
 */
#define STR_MEMO 256

static struct str_memo {
	uint64_t obj;
	const char *want;
	pid_t pid;
	bool eq;
} str_memo[STR_MEMO];

static bool str_is(const struct reader *r, uint64_t obj, const char *want)
{
	struct str_memo *m = &str_memo[(obj >> 4 ^ (uint64_t)r->pid ^ (uintptr_t)want) % STR_MEMO];
	char *s;

	if (m->pid == r->pid && m->obj == obj && m->want == want)
		return m->eq;
	s = py_read_str(r->pid, r->l, obj, 64);
	*m = (struct str_memo){ .obj = obj, .want = want, .pid = r->pid, .eq = s && strcmp(s, want) == 0 };
	free(s);
	return m->eq;
}

/* Where a keys object's (or a 2.7 dict's) entries are, and their shape. */
struct entries {
	uint64_t at, n;             /* the first entry, and how many there are */
	uint64_t esize, koff, voff; /* an entry's size, its key's and value's places */
};

static bool keys_entries(const struct reader *r, uint64_t keys, struct entries *e)
{
	*e = (struct entries){ .esize = 24, .koff = 8, .voff = 16 };
	switch (r->l->dict) {
	case PY_DICT_27:                     /* here `keys` is the dict itself */
		e->n = rd(r, keys + 32) + 1; /* ma_mask + 1 */
		e->at = rd(r, keys + 40);    /* ma_table */
		break;
	case PY_DICT_36: {
		uint64_t size = rd(r, keys + 8), ix = size <= 0xff            ? 1
						      : size <= 0xffff        ? 2
						      : size <= 0xffffffffULL ? 4
									      : 8;

		e->n = rd(r, keys + 32); /* dk_nentries */
		e->at = keys + 40 + size * ix;
		break;
	}
	case PY_DICT_311:
		e->n = rd(r, keys + 24);
		e->at = keys + 32 + (1ULL << (rd8(r, keys + 9) & 63)); /* dk_log2_index_bytes */
		if (rd8(r, keys + 10) != 0) {                          /* unicode or split keys: (key, value) */
			e->esize = 16;
			e->koff = 0;
			e->voff = 8;
		}
		break;
	default:
		return false;
	}
	return keys != 0;
}

/*
 * Look `name` up among the entries of a keys object (or a 2.7 dict);
 * values_arr, when not 0, is the split table's values[] array. *index (may
 * be NULL) gets the entry's index, -1 when not found.
 */
static uint64_t keys_find(const struct reader *r, uint64_t keys, uint64_t values_arr, const char *name, int64_t *index)
{
	struct entries e;

	if (index)
		*index = -1;
	if (!keys_entries(r, keys, &e) || e.n > MAX_ENTRIES)
		return 0;
	for (uint64_t i = 0; i < e.n; i++) {
		uint64_t key = rd(r, e.at + i * e.esize + e.koff);

		if (key && str_is(r, key, name)) {
			if (index)
				*index = (int64_t)i;
			return values_arr ? rd(r, values_arr + 8 * i) : rd(r, e.at + i * e.esize + e.voff);
		}
	}
	return 0;
}

static uint64_t keys_get(const struct reader *r, uint64_t keys, uint64_t values_arr, const char *name)
{
	return keys_find(r, keys, values_arr, name, NULL);
}

static uint64_t dict_get(const struct reader *r, uint64_t dict, const char *name)
{
	uint64_t values;

	if (!dict)
		return 0;
	if (r->l->dict == PY_DICT_27)
		return keys_get(r, dict, 0, name);
	values = rd(r, dict + r->l->ma_values);
	return keys_get(r, rd(r, dict + r->l->ma_keys), values ? values + r->l->dict_values : 0, name);
}

static uint64_t attr(const struct reader *r, uint64_t obj, const char *name)
{
	uint64_t type = rd(r, obj + r->l->ob_type), keys = type ? rd(r, type + r->l->ht_cached_keys) : 0, d;
	int64_t dictoffset;

	if (!type)
		return 0;
	/* A subclass of a C type with its own dict slot (asyncio's Future) keeps
	 * that slot: no managed dict (Py_TPFLAGS_MANAGED_DICT, 1 << 4). */
	if (r->l->managed != PY_MANAGED_NONE && !(rd(r, type + r->l->tp_flags) & (1UL << 4)) &&
	    (dictoffset = (int64_t)rd(r, type + r->l->tp_dictoffset)) > 0)
		return dict_get(r, rd(r, obj + dictoffset), name);
	switch (r->l->managed) {
	case PY_MANAGED_NONE:
		dictoffset = (int64_t)rd(r, type + r->l->tp_dictoffset);
		return dictoffset > 0 ? dict_get(r, rd(r, obj + dictoffset), name) : 0;
	case PY_MANAGED_311:
		if ((d = rd(r, obj - 24)))
			return dict_get(r, d, name);
		return keys_get(r, keys, rd(r, obj - 32), name);
	case PY_MANAGED_312:
		d = rd(r, obj - 24);
		if (d & 1) /* values, stored as pointer - 1 */
			return keys_get(r, keys, d + 1, name);
		return dict_get(r, d, name);
	case PY_MANAGED_313:
	case PY_MANAGED_313_FT:
		if ((d = rd(r, obj - (r->l->managed == PY_MANAGED_313 ? 24 : 8))))
			return dict_get(r, d, name);
		return keys_get(r, keys, obj + rd(r, type + r->l->tp_basicsize) + r->l->dict_values, name);
	}
	return 0;
}

uint64_t py_dict_lookup(pid_t pid, const struct py_layout *l, uint64_t dict, const char *name)
{
	struct reader r = { pid, l };

	return dict_get(&r, dict, name);
}

uint64_t py_attr_lookup(pid_t pid, const struct py_layout *l, uint64_t obj, const char *name)
{
	struct reader r = { pid, l };

	return obj ? attr(&r, obj, name) : 0;
}

size_t py_dict_items(pid_t pid, const struct py_layout *l, uint64_t dict, uint64_t *kv, size_t max)
{
	struct reader r = { pid, l };
	struct entries e;
	size_t got = 0;

	if (!dict || l->dict == PY_DICT_27 || rd(&r, dict + l->ma_values) ||
	    !keys_entries(&r, rd(&r, dict + l->ma_keys), &e))
		return 0; /* a split table's values are elsewhere */
	for (uint64_t i = 0; i < e.n && i < 4 * max && got < max; i++) {
		uint64_t k = rd(&r, e.at + i * e.esize + e.koff);

		if (k) {
			kv[2 * got] = k;
			kv[2 * got + 1] = rd(&r, e.at + i * e.esize + e.voff);
			got++;
		}
	}
	return got;
}

/*
 * Where attr() finds obj.name when the instance keeps its attributes as
 * values in its type's shared keys' order (split dicts, managed values):
 * the same steps, with the index of name among the keys. The object's
 * attribute must be where it says: the caller checks with attr().
 */
bool py_attr_where(pid_t pid, const struct py_layout *l, uint64_t obj, const char *name, struct pyebpf_py_ctx *out)
{
	struct reader r = { pid, l };
	uint64_t type = rd(&r, obj + l->ob_type), keys = type ? rd(&r, type + l->ht_cached_keys) : 0, d;
	int64_t dictoffset, index = -1;

	if (!type)
		return false;
	switch (l->managed) {
	case PY_MANAGED_NONE:
		if ((dictoffset = (int64_t)rd(&r, type + l->tp_dictoffset)) <= 0 || l->dict == PY_DICT_27 ||
		    !(d = rd(&r, obj + dictoffset)) || !rd(&r, d + l->ma_values))
			return false; /* no split dict */
		keys_find(&r, rd(&r, d + l->ma_keys), 0, name, &index);
		*out = (struct pyebpf_py_ctx){ .span_how = PYEBPF_ATTR_DICT,
					       .span_off = (int32_t)dictoffset,
					       .dict_values = l->ma_values };
		break;
	case PY_MANAGED_311:
		keys_find(&r, keys, 0, name, &index);
		*out = (struct pyebpf_py_ctx){ .span_how = PYEBPF_ATTR_VALUES,
					       .span_off = -32,
					       .dict_values = l->dict_values };
		break;
	case PY_MANAGED_312:
		keys_find(&r, keys, 0, name, &index);
		*out = (struct pyebpf_py_ctx){ .span_how = PYEBPF_ATTR_TAGGED,
					       .span_off = -24,
					       .dict_values = l->dict_values };
		break;
	case PY_MANAGED_313:
	case PY_MANAGED_313_FT:
		keys_find(&r, keys, 0, name, &index);
		*out = (struct pyebpf_py_ctx){ .span_how = PYEBPF_ATTR_INLINE,
					       .span_off = (int32_t)rd(&r, type + l->tp_basicsize),
					       .dict_values = l->dict_values };
		break;
	}
	if (index < 0 || index > 255)
		return false;
	out->span_index = (uint32_t)index;
	return true;
}

/*
 * Whether a code object is a bootstrap function, remembered across threads
 * (thousands of threads run the same Thread._bootstrap: reading its name
 * and file for each costs a stop with many blocked threads seconds). By
 * (pid, code, test): a code object freed and its address reused for
 * another within a process is possible but rare, and costs a thread name.
 */
#define BOOT_MEMO 256

static struct boot_memo {
	uint64_t code;
	const void *test;
	pid_t pid;
	bool yes;
} boot_memo[BOOT_MEMO];

static bool memo_is_boot(const struct reader *r, uint64_t code, bool (*is_boot_code)(const struct reader *, uint64_t))
{
	struct boot_memo *m = &boot_memo[(code >> 4 ^ (uint64_t)r->pid) % BOOT_MEMO];

	if (m->pid != r->pid || m->code != code || m->test != (const void *)is_boot_code)
		*m = (struct boot_memo){
			.pid = r->pid, .code = code, .test = (const void *)is_boot_code, .yes = is_boot_code(r, code)
		};
	return m->yes;
}

#define CODE_MEMO 8

/* Is code a _bootstrap function of a file whose path ends in `module`
 * ("/threading.py")? 2.7's threading spells it __bootstrap. */
static bool is_bootstrap_of(const struct reader *r, uint64_t code, const char *module)
{
	char *n = py_read_str(r->pid, r->l, rd(r, code + r->l->co_name), 64), *file;
	bool yes = n && (!strcmp(n, "_bootstrap") || !strcmp(n, "__bootstrap"));
	size_t len, want = strlen(module);

	free(n);
	if (!yes)
		return false;
	file = py_read_str(r->pid, r->l, rd(r, code + r->l->co_filename), 4096);
	len = file ? strlen(file) : 0;
	yes = len >= want && !strcmp(file + len - want, module);
	free(file);
	return yes;
}

/* threading.Thread's _bootstrap names a thread; multiprocessing's
 * BaseProcess._bootstrap runs a worker process's main thread, which is no
 * threading.Thread of its own: it names the process. */
static bool is_thread_bootstrap(const struct reader *r, uint64_t code)
{
	return is_bootstrap_of(r, code, "/threading.py");
}

static bool is_process_bootstrap(const struct reader *r, uint64_t code)
{
	return is_bootstrap_of(r, code, "/multiprocessing/process.py");
}

/* The frame nearest the root whose code `is_boot` accepts, and its code
 * object. Deep stacks are recursions of a few functions: each code is
 * looked at once. *rooted: the walk reached the root frame. */
static uint64_t find_bootstrap(const struct reader *r, uint64_t tstate,
			       bool (*is_boot_code)(const struct reader *, uint64_t), uint64_t *boot_code, bool *rooted)
{
	uint64_t frame = py_frame_first(r->pid, r->l, tstate), boot = 0, seen[CODE_MEMO] = { 0 };
	bool is_boot[CODE_MEMO] = { false };
	unsigned next = 0;

	for (int i = 0; frame && i < MAX_WALK; i++) {
		uint64_t back, code = py_frame_step(r->pid, r->l, frame, &back);
		int k = -1;

		for (int j = 0; j < CODE_MEMO && code; j++)
			if (seen[j] == code)
				k = j;
		if (code && k < 0) {
			k = (int)(next++ % CODE_MEMO);
			seen[k] = code;
			is_boot[k] = memo_is_boot(r, code, is_boot_code);
		}
		if (k >= 0 && is_boot[k]) {
			boot = frame;
			*boot_code = code;
		}
		frame = back;
		*rooted = !frame;
	}
	return boot;
}

char *py_thread_name(pid_t pid, const struct py_interp *in, uint64_t tstate, struct py_thread_hint *hint)
{
	const struct py_layout *l = &in->layout;
	struct reader r = { pid, l };
	uint64_t boot = 0, code = 0;
	bool rooted = false;

	if (hint && hint->none) /* a whole stack without one: not a threading.Thread */
		return NULL;
	/* Where it was last time, if that frame still runs the same code. */
	if (hint && hint->frame && py_frame_code(pid, l, hint->frame) == hint->code) {
		boot = hint->frame;
		code = hint->code;
	} else {
		boot = find_bootstrap(&r, tstate, is_thread_bootstrap, &code, &rooted);
	}
	if (hint)
		*hint = (struct py_thread_hint){ .frame = boot, .code = code, .none = !boot && rooted };
	if (!boot)
		return NULL;
	uint64_t self = rd(&r, boot + l->frame_localsplus);
	uint64_t name = self ? attr(&r, self, in->major == 2 ? "_Thread__name" : "_name") : 0;
	return name ? py_read_str(pid, l, name, 256) : NULL;
}

char *py_process_name(pid_t pid, const struct py_interp *in, uint64_t tstate)
{
	const struct py_layout *l = &in->layout;
	struct reader r = { pid, l };
	uint64_t code = 0, boot, self, name;
	bool rooted = false;

	boot = find_bootstrap(&r, tstate, is_process_bootstrap, &code, &rooted);
	self = boot ? rd(&r, boot + l->frame_localsplus) : 0;
	name = self ? attr(&r, self, "_name") : 0;
	return name ? py_read_str(pid, l, name, 256) : NULL;
}
