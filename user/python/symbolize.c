// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/symbolize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "system/target_fs.h"
#include "base/util.h"
#include "base/escape.h"
#include "python/linetable.h"
#include "python/gil.h"
#include "python/mem_copies.h"
#include "python/procmem.h"
#include "python/qualname.h"
#include "python/threadname.h"

#define RECHECK_NS 1000000000ULL
#define MAX_NAME 1024
#define MAX_LINETABLE (1 << 20)
#define CODE_READ PY_CODE_READ_MAX /* at most this much of a code object is read at once */
#define CODE_MEMO 4

struct py_code {
	uint64_t name_ptr, file_ptr; /* identity, with firstlineno */
	int32_t firstlineno;
	uint32_t check; /* pyebpf_code_check() of the three */
	bool valid;
	uint64_t checked_ns;
	uint32_t name, file; /* profile string ids */
	uint8_t *linetable;
	size_t linetable_len;
	/* The last frames named, by instruction offset: a line is found by
	 * decoding the line table from its start, and a hot function is named
	 * at the same few offsets again and again. */
	int32_t memo_lasti[CODE_MEMO];
	uint32_t memo_frame[CODE_MEMO];
	uint32_t memo_used, memo_next;
};

/* A code object is known by its address and the globals of the frame running it:
 * a freed code object's address reused by another module's code gets a new entry. */
struct code_key {
	uint64_t code, globals;
};

struct py_proc {
	uint32_t pid;
	uint64_t maps_gen;
	bool python;                 /* supported interpreter found */
	bool reported;               /* the unsupported line, or the unreadable frames line, was printed */
	uint64_t frames, unreadable; /* Python frames named, and of them not readable */
	struct py_interp interp;
	struct hashmap *codes; /* struct code_key → struct py_code * */
	/* Frames whose code object was gone when read: struct lost_key → frame id + 1. */
	struct hashmap *lost;
	struct gil_range gil; /* found once; {0, 0} until then */
};

struct pyprocs {
	struct profile *prof;
	struct py_detector *det;
	uint64_t codes_read;
	bool said_free_threaded; /* the line on free-threaded builds was printed */
	/* The last source file read for qualified names (< 3.11). */
	char *src_key; /* "pid:path" */
	char *src;
	size_t src_len;
};

#define MAX_SOURCE (4 << 20)
/*
 * Code objects cached per process. A process that keeps making code (exec,
 * templating engines) would grow the cache without end: past this many its
 * cache starts over, and live code is read again at its next sample.
 */
#define MAX_CODES_PER_PROC 65536

/* The source of a code object's file as the process sees it, or NULL. */
static const char *source_of(struct pyprocs *t, uint32_t pid, const char *file, size_t *len)
{
	char key[4200];

	snprintf(key, sizeof(key), "%u:%s", pid, file);
	if (t->src_key && !strcmp(t->src_key, key)) {
		*len = t->src_len;
		return t->src;
	}
	free(t->src_key);
	free(t->src);
	t->src_key = xstrdup(key);
	t->src = NULL;
	t->src_len = 0;
	/* As the process sees it (relative names: from its working directory),
	 * a regular file only, bounded: a code object's file name is the
	 * process's to choose, FIFOs and links to host files included. */
	t->src = target_read(pid, file, MAX_SOURCE, &t->src_len);
	*len = t->src_len;
	return t->src;
}

struct pyprocs *pyprocs__new(struct profile *prof)
{
	struct pyprocs *t = xcalloc(1, sizeof(*t));

	t->prof = prof;
	t->det = py_detector__new();
	return t;
}

static void code_free(void *v)
{
	struct py_code *c = v;

	free(c->linetable);
	free(c);
}

static void codes_free(struct hashmap *codes)
{
	hashmap__free_values(codes, code_free);
}

/* A frame named without its code object, by what BPF saw of it. */
struct lost_key {
	uint64_t code, globals;
	uint32_t flags, reserved;
};

void py_proc__free(struct py_proc *p)
{
	if (!p)
		return;
	codes_free(p->codes);
	hashmap__free(p->lost);
	free(p);
}

void pyprocs__free(struct pyprocs *t)
{
	if (!t)
		return;
	py_detector__free(t->det);
	free(t->src_key);
	free(t->src);
	free(t);
}

struct py_proc *pyprocs__lookup(struct pyprocs *t, struct py_proc **slot, uint32_t pid, uint64_t maps_gen,
				bool *changed)
{
	bool created = !*slot, was;
	struct py_proc *p;
	char why[256], safe[4 * 256 + 1];

	*changed = false;
	if (created) {
		p = *slot = xcalloc(1, sizeof(*p));
		p->pid = pid;
	} else {
		p = *slot;
		if (p->maps_gen == maps_gen)
			return p->python ? p : NULL;
	}
	/* First look, or its mappings changed (libpython loaded since, exec). */
	p->maps_gen = maps_gen;
	was = p->python;
	switch (py_detect(t->det, (pid_t)pid, &p->interp, why, sizeof(why))) {
	case PY_SUPPORTED:
		if (!p->python || created) {
			codes_free(p->codes);
			hashmap__free(p->lost);
			p->codes = hashmap__new();
			p->lost = hashmap__new();
		}
		p->python = true;
		*changed = true;
		if (p->interp.layout.free_threaded && !t->said_free_threaded)
			err_msg("pid %u: CPython %d.%dt is free-threaded: no GIL, its threads run Python in parallel "
				"(samples carry no gil label)",
				pid, p->interp.major, p->interp.minor);
		t->said_free_threaded |= p->interp.layout.free_threaded;
		return p;
	case PY_UNSUPPORTED:
		if (!p->reported) /* why names the process's files: escaped for the terminal */
			err_msg("pid %u: %s", pid, text_escape(why, safe, sizeof(safe)));
		p->reported = true;
		/* fallthrough */
	case PY_NOT_PYTHON:
		p->python = false;
		*changed = was;
		return NULL;
	}
	return NULL;
}

bool py_proc__supported(const struct py_proc *p)
{
	return p && p->python;
}

uint32_t py_proc__pid(const struct py_proc *p)
{
	return p->pid;
}

const struct py_interp *py_proc__interp(const struct py_proc *p)
{
	return &p->interp;
}

const struct gil_range *py_proc__gil(struct py_proc *p)
{
	if (!p->gil.hi && p->python)
		py_gil_range((pid_t)p->pid, &p->interp, &p->gil);
	return p->gil.hi ? &p->gil : NULL;
}

uint64_t pyprocs__codes_read(const struct pyprocs *t)
{
	return t->codes_read;
}

static uint64_t field64(const uint8_t *buf, uint32_t off)
{
	uint64_t v = 0;

	if (off + 8 <= CODE_READ)
		memcpy(&v, buf + off, 8);
	return v;
}

static int32_t field32(const uint8_t *buf, uint32_t off)
{
	int32_t v = 0;

	if (off + 4 <= CODE_READ)
		memcpy(&v, buf + off, 4);
	return v;
}

/*
 * Is the object whose first bytes are buf alive? A freed object's memory
 * may keep its type and fields (the allocator writes its free-list link
 * over the first word only), names that point at strings freed with it.
 * Its reference count was 0 when it was freed: with a GIL, the link is 0
 * or an address (bits 32-47 set; a live count keeps them 0, 3.14's flags
 * live in bits 48-63); free-threaded, the local and shared counts stay 0.
 */
static bool object_alive(const struct py_layout *l, const uint8_t *buf)
{
	uint64_t rc;

	if (l->free_threaded) {
		uint32_t local;
		uint64_t shared;

		memcpy(&local, buf + 12, sizeof(local));
		memcpy(&shared, buf + 16, sizeof(shared));
		return local != 0 || (shared >> 2) != 0; /* the low 2 bits: merge state */
	}
	memcpy(&rc, buf, sizeof(rc));
	return (uint32_t)rc != 0 && ((rc >> 32) & 0xffff) == 0;
}

/* Read the code object at addr into c; false when it is not one. */
static bool read_code_now(struct pyprocs *t, struct py_proc *p, uint64_t addr, struct py_code *c)
{
	const struct py_layout *l = &p->interp.layout;
	uint8_t buf[CODE_READ];
	char *name, *file;

	free(c->linetable);
	memset(c, 0, sizeof(*c));
	memset(buf, 0, sizeof(buf));
	if (procmem_read((pid_t)p->pid, addr, buf, py_code_read_size(l)))
		return false;
	if (p->interp.code_type && field64(buf, l->ob_type) != p->interp.code_type)
		return false;
	if (!object_alive(l, buf))
		return false;
	c->name_ptr = field64(buf, l->co_qualname != PYEBPF_NO_OFFSET ? l->co_qualname : l->co_name);
	c->file_ptr = field64(buf, l->co_filename);
	c->firstlineno = field32(buf, l->co_firstlineno);
	c->check = pyebpf_code_check(c->name_ptr, c->file_ptr, c->firstlineno);
	name = py_read_str((pid_t)p->pid, l, c->name_ptr, MAX_NAME);
	file = py_read_str((pid_t)p->pid, l, c->file_ptr, 4096);
	if (!name || !file) {
		free(name);
		free(file);
		return false;
	}
	if (l->co_qualname == PYEBPF_NO_OFFSET) {
		/* Before 3.11 only co_name: the class (and enclosing functions) from the source. */
		size_t len;
		const char *src = source_of(t, p->pid, file, &len);
		char *q = src ? py_qualname_from_source(src, len, c->firstlineno, name) : NULL;

		if (q) {
			free(name);
			name = q;
		}
	}
	c->name = profile__str(t->prof, name);
	c->file = profile__str(t->prof, file);
	free(name);
	free(file);
	c->linetable = py_read_bytes((pid_t)p->pid, l, field64(buf, l->co_linetable), MAX_LINETABLE, &c->linetable_len);
	c->valid = true;
	t->codes_read++;
	return true;
}

/*
 * A code object as the process holds it; else as BPF copied it when the
 * sample named it (python/mem_copies.h): a process that ends right after
 * its last sample is gone by the time it is named, or finalizing, its code
 * objects freed.
 */
static bool read_code(struct pyprocs *t, struct py_proc *p, uint64_t addr, struct py_code *c)
{
	bool ok;

	if (read_code_now(t, p, addr, c))
		return true;
	procmem_copies_first(true);
	ok = read_code_now(t, p, addr, c);
	procmem_copies_first(false);
	return ok;
}

/* Is the cached entry still the code object at addr? */
static bool still_same(struct py_proc *p, uint64_t addr, const struct py_code *c)
{
	const struct py_layout *l = &p->interp.layout;
	uint8_t buf[CODE_READ] = { 0 };

	if (procmem_read((pid_t)p->pid, addr, buf, py_code_read_size(l)))
		return true; /* gone: keep what we know */
	return field64(buf, l->co_qualname != PYEBPF_NO_OFFSET ? l->co_qualname : l->co_name) == c->name_ptr &&
	       field64(buf, l->co_filename) == c->file_ptr && field32(buf, l->co_firstlineno) == c->firstlineno;
}

/* The cache entry of (code, globals), read now if it is new or its
 * re-check is due. */
static struct py_code *code_entry(struct pyprocs *t, struct py_proc *p, uint64_t code, uint64_t globals, uint64_t now)
{
	struct code_key key = { code, globals };
	bool created;
	void **v = hashmap__put_ptr(p->codes, &key, sizeof(key), &created);
	struct py_code *c;

	if (created && hashmap__size(p->codes) > MAX_CODES_PER_PROC) {
		hashmap__remove(p->codes, &key, sizeof(key)); /* no value yet: not to be freed */
		codes_free(p->codes);
		hashmap__free(p->lost);
		p->codes = hashmap__new();
		p->lost = hashmap__new();
		v = hashmap__put_ptr(p->codes, &key, sizeof(key), &created);
	}
	if (created) {
		c = xcalloc(1, sizeof(*c));
		*v = c;
		read_code(t, p, code, c);
		c->checked_ns = now;
	} else {
		uint8_t first;

		c = *v;
		/* Unreadable when a sample before this one named it, after its
		 * process had ended; a copy BPF sent since makes it readable. */
		if (!c->valid && mem_copies__read(p->pid, code, &first, 1)) {
			read_code(t, p, code, c);
			c->checked_ns = now;
		} else if (now - c->checked_ns > RECHECK_NS) {
			if (!c->valid || !still_same(p, code, c))
				read_code(t, p, code, c);
			c->checked_ns = now;
		}
	}
	return c;
}

static uint32_t unreadable_frame(struct pyprocs *t, struct py_proc *p)
{
	struct frame f = { .kind = FRAME_MARK };

	/* A layout that is wrong for this process reads as unreadable
	 * frames: said once, never presented as a profile of Python. */
	if (++p->unreadable >= 50 && p->unreadable * 2 > p->frames && !p->reported) {
		err_msg("pid %u: %llu of %llu Python frames of CPython %d.%d%s could not be read (marked "
			"[unreadable Python frame]): its memory is not laid out as pyebpf expects",
			p->pid, (unsigned long long)p->unreadable, (unsigned long long)p->frames, p->interp.major,
			p->interp.minor, p->interp.layout.free_threaded ? "t" : "");
		p->reported = true;
	}
	f.name = profile__str(t->prof, "[unreadable Python frame]");
	return profile__frame(t->prof, &f);
}

/* The frame of code object c at byte offset lasti. */
static uint32_t code_frame(struct pyprocs *t, struct py_proc *p, struct py_code *c, int32_t lasti)
{
	struct frame f = { .kind = FRAME_PYTHON };

	for (uint32_t i = 0; i < c->memo_used; i++)
		if (c->memo_lasti[i] == lasti)
			return c->memo_frame[i];
	int line = py_line_for_offset(p->interp.layout.linetable, c->linetable, c->linetable_len, c->firstlineno,
				      lasti);
	f.name = c->name;
	f.module = c->file;
	f.line = line >= 0 ? (uint32_t)line : (uint32_t)c->firstlineno;
	f.start_line = c->firstlineno > 0 ? (uint32_t)c->firstlineno : 0;
	uint32_t id = profile__frame(t->prof, &f);

	c->memo_lasti[c->memo_next] = lasti;
	c->memo_frame[c->memo_next] = id;
	c->memo_next = (c->memo_next + 1) % CODE_MEMO;
	if (c->memo_used < CODE_MEMO)
		c->memo_used++;
	return id;
}

uint32_t py_proc__frame(struct pyprocs *t, struct py_proc *p, uint64_t code, uint64_t globals, int32_t lasti,
			uint64_t now)
{
	struct py_code *c = code_entry(t, p, code, globals, now);

	p->frames++;
	return c->valid ? code_frame(t, p, c, lasti) : unreadable_frame(t, p);
}

/* A str object's text, or NULL for anything else. */
static char *str_object(struct py_proc *p, uint64_t obj, size_t max_chars)
{
	const struct py_layout *l = &p->interp.layout;
	uint64_t type = 0, name = 0;
	char tn[4] = { 0 };

	if (!obj || procmem_u64((pid_t)p->pid, obj + l->ob_type, &type) || !type ||
	    procmem_u64((pid_t)p->pid, type + l->tp_name, &name) || !name ||
	    procmem_read((pid_t)p->pid, name, tn, sizeof(tn)) || memcmp(tn, "str", 4) != 0)
		return NULL;
	return py_read_str((pid_t)p->pid, l, obj, max_chars);
}

/*
 * A frame whose code object is gone (another may live at its address). A
 * module's frame is still `<module>` of the file its globals' __file__
 * names (the module's dict lives on in sys.modules), at no line: its line
 * table went with it. Any other is an honest mark, never another
 * function's name.
 */
static uint32_t lost_code_frame(struct pyprocs *t, struct py_proc *p, const struct pyebpf_pyframe *pf)
{
	struct lost_key key = { pf->code, pf->globals, pf->flags, 0 };
	bool created;
	uint64_t *v;

	/* Bounded as the code cache is: a program that execs new code again
	 * and again leaves a new key each time. */
	if (hashmap__size(p->lost) >= MAX_CODES_PER_PROC) {
		hashmap__free(p->lost);
		p->lost = hashmap__new();
	}
	v = hashmap__put(p->lost, &key, sizeof(key), &created);
	const struct py_layout *l = &p->interp.layout;
	struct frame f = { .kind = FRAME_PYTHON };
	char *file = NULL;

	if (!created)
		return (uint32_t)*v;
	if ((pf->flags & PYEBPF_PYFRAME_MODULE) && pf->globals)
		file = str_object(p, py_dict_lookup((pid_t)p->pid, l, pf->globals, "__file__"), 4096);
	if (file) {
		f.name = profile__str(t->prof, "<module>");
		f.module = profile__str(t->prof, file);
	} else {
		f.kind = FRAME_MARK;
		f.name = profile__str(t->prof, "[code object gone before it was read]");
	}
	*v = profile__frame(t->prof, &f);
	free(file);
	return (uint32_t)*v;
}

uint32_t py_proc__pyframe(struct pyprocs *t, struct py_proc *p, const struct pyebpf_pyframe *pf, uint64_t now)
{
	uint32_t check = PYEBPF_PYFRAME_CHECK(pf->flags);
	struct py_code *c;

	if (!check) /* BPF could not read the code object: as before, by its address */
		return py_proc__frame(t, p, pf->code, pf->globals, pf->lasti, now);
	c = code_entry(t, p, pf->code, pf->globals, now);
	p->frames++;
	if (py_code_matches(c->valid, c->check, check))
		return code_frame(t, p, c, pf->lasti);
	/* The entry is another code object's, or the code was unreadable: read
	 * what is at the address now, which is the sampled code object while it
	 * lives. */
	read_code(t, p, pf->code, c);
	c->checked_ns = now;
	if (py_code_matches(c->valid, c->check, check))
		return code_frame(t, p, c, pf->lasti);
	return lost_code_frame(t, p, pf);
}

void py_proc__frames(struct pyprocs *t, struct py_proc *p, const struct pyebpf_pyframe *leaf_first, uint32_t n,
		     uint64_t now, uint32_t *out, bool *entry)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct pyebpf_pyframe *f = &leaf_first[n - 1 - i];

		out[i] = py_proc__pyframe(t, p, f, now);
		if (entry)
			entry[i] = f->flags & PYEBPF_PYFRAME_ENTRY;
	}
}
