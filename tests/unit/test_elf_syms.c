#include "unit.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <limits.h>
#include <unistd.h>

#include "../pythons.h"
#include "symbols/elf_syms.h"
#include "symbols/maps.h"
#include "symbols/procs.h"
#include "profile/profile.h"

/* Resolve a runtime address of this process the way the profiler does:
 * maps → file offset → ELF virtual address → symbol. */
static const char *resolve_with(const char *lib, void *addr, struct elf_syms **keep, const char *const *debug_dirs)
{
	struct mapping *m;
	size_t n;
	uint64_t vaddr;

	cr_assert_eq(maps__read(getpid(), true, &m, &n), 0);
	const struct mapping *hit = maps__find(m, n, (uint64_t)addr);
	cr_assert(hit, "address %p is in no executable mapping", addr);
	uint64_t off = (uint64_t)addr - hit->start + hit->pgoff;
	*keep = elf_syms__load(lib, debug_dirs);
	cr_assert(*keep);
	maps__free(m, n);
	if (elf_syms__offset_to_vaddr(*keep, off, &vaddr))
		return NULL;
	return elf_syms__lookup(*keep, vaddr, NULL);
}

static const char *resolve(const char *lib, void *addr, struct elf_syms **keep)
{
	return resolve_with(lib, addr, keep, NULL);
}

static void *must_dlsym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	cr_assert(p, "dlsym %s: %s", name, dlerror());
	return p;
}

/* The fixture library's real path into lib, and the library loaded here. */
static void *open_fixture(char lib[PATH_MAX])
{
	void *h;

	cr_assert(realpath(FIXTURE("libfixture.so"), lib));
	h = dlopen(lib, RTLD_NOW);
	cr_assert(h, "%s", dlerror());
	return h;
}

Test(elf_syms, global_local_and_demangled_cxx_symbols)
{
	char lib[PATH_MAX];
	struct elf_syms *s;
	void *h;

	h = open_fixture(lib);

	char *fn = must_dlsym(h, "fixture_c_function");
	cr_assert_str_eq(resolve(lib, fn, &s), "fixture_c_function");
	elf_syms__free(s);
	cr_assert_str_eq(resolve(lib, fn + 5, &s), "fixture_c_function");
	elf_syms__free(s);

	void *(*local_addr)(void) = (void *(*)(void))must_dlsym(h, "fixture_local_addr");
	/* A file-local C++ function: mangled _ZL12local_helperi in .symtab. */
	cr_assert_str_eq(resolve(lib, local_addr(), &s), "local_helper(int)");
	elf_syms__free(s);

	void *member = must_dlsym(h, "_ZNK3geo6Matrix8multiplyEi");
	cr_assert_str_eq(resolve(lib, member, &s), "geo::Matrix::multiply(int) const");
	cr_assert_eq(elf_syms__find(s, "fixture_c_function") != 0, 1);
	cr_assert_eq(strlen(elf_syms__build_id(s)), 40, "build id: '%s'", elf_syms__build_id(s));
	elf_syms__free(s);
	dlclose(h);
}

Test(elf_syms, stripped_library_keeps_dynamic_symbols_only)
{
	char lib[PATH_MAX];
	struct elf_syms *s;
	void *h;

	cr_assert(realpath(FIXTURE("libfixture-stripped.so"), lib));
	h = dlopen(lib, RTLD_NOW);
	cr_assert(h, "%s", dlerror());
	cr_assert_str_eq(resolve(lib, must_dlsym(h, "fixture_c_function"), &s), "fixture_c_function");
	elf_syms__free(s);
	void *(*local_addr)(void) = (void *(*)(void))must_dlsym(h, "fixture_local_addr");
	/* Not in .dynsym: no name rather than a wrong one. */
	cr_assert_null(resolve(lib, local_addr(), &s));
	elf_syms__free(s);
	dlclose(h);
}

/* Where a function has no symbol, its FDE in .eh_frame still tells where it
 * starts: every address inside it names one function. */
Test(elf_syms, function_without_symbol_starts_where_its_fde_does)
{
	char lib[PATH_MAX];
	struct elf_syms *s, *full;
	uint64_t start = 0, vaddr, off;
	struct mapping *m;
	size_t n;
	void *h;

	cr_assert(realpath(FIXTURE("libfixture-stripped.so"), lib));
	h = dlopen(lib, RTLD_NOW);
	cr_assert(h, "%s", dlerror());
	void *(*local_addr)(void) = (void *(*)(void))must_dlsym(h, "fixture_local_addr");
	uint64_t addr = (uint64_t)local_addr();
	cr_assert_null(resolve(lib, (void *)(addr + 4), &s));
	cr_assert_eq(maps__read(getpid(), true, &m, &n), 0);
	const struct mapping *hit = maps__find(m, n, addr);
	off = addr + 4 - hit->start + hit->pgoff;
	cr_assert_eq(elf_syms__offset_to_vaddr(s, off, &vaddr), 0);
	cr_assert_eq(elf_syms__function_start(s, vaddr, &start), 0);
	/* The unstripped twin names that start local_helper. */
	cr_assert(full = elf_syms__load(FIXTURE("libfixture.so"), NULL));
	uint64_t sym_off = 1;
	cr_assert_str_eq(elf_syms__lookup(full, start, &sym_off), "local_helper(int)");
	cr_assert_eq(sym_off, 0);
	cr_assert_eq(elf_syms__function_start(s, 0, &start), -1, "no FDE covers the ELF header");
	maps__free(m, n);
	elf_syms__free(full);
	elf_syms__free(s);
	dlclose(h);
}

/* A stripped file takes the full symbol table of its detached debug file,
 * found by build id (as Debian's -dbg packages install them); a debug file
 * of another build under that name is passed over. */
Test(elf_syms, stripped_library_takes_symbols_from_its_debug_file)
{
	char lib[PATH_MAX], good[PATH_MAX], other[PATH_MAX];
	struct elf_syms *s;
	void *h;

	cr_assert(realpath(FIXTURE("libfixture-stripped.so"), lib));
	cr_assert(realpath(FIXTURE("debug"), good));
	cr_assert(realpath(FIXTURE("debug-other"), other));
	h = dlopen(lib, RTLD_NOW);
	cr_assert(h, "%s", dlerror());
	void *(*local_addr)(void) = (void *(*)(void))must_dlsym(h, "fixture_local_addr");
	void *member = must_dlsym(h, "_ZNK3geo6Matrix8multiplyEi");

	const char *const both[] = { other, good, NULL };
	cr_assert_str_eq(resolve_with(lib, local_addr(), &s, both), "local_helper(int)");
	elf_syms__free(s);
	cr_assert_str_eq(resolve_with(lib, member, &s, both), "geo::Matrix::multiply(int) const");
	elf_syms__free(s);

	const char *const mismatched[] = { other, "/nonexistent", NULL };
	cr_assert_null(resolve_with(lib, local_addr(), &s, mismatched));
	elf_syms__free(s);
	dlclose(h);
}

/* PLT stubs take "name@plt" names; binutils' objdump, which names them the
 * same way, says where each one is: .plt/.plt.sec (through .rela.plt) and
 * .plt.got (through .rela.dyn). */
static int check_plt_against_objdump(const char *lib)
{
	char cmd[PATH_MAX + 64], line[512];
	struct elf_syms *s;
	int checked = 0;
	FILE *f;

	cr_assert(s = elf_syms__load(lib, NULL));
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec -j .plt.got '%s'", lib);
	cr_assert(f = popen(cmd, "r"));
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char name[256];
		uint64_t off = 99;

		if (sscanf(line, "%llx <%255[^>]>:", &addr, name) != 2 || !strstr(name, "@plt") || strpbrk(name, "+-"))
			continue;
		{
			const char *got = elf_syms__lookup(s, addr, &off);
			cr_assert(got && !strcmp(got, name), "%s: %s at %llx, not %s", lib, name, addr,
				  got ? got : "(none)");
		}
		cr_assert_eq(off, 0);
		cr_assert_str_eq(elf_syms__lookup(s, addr + 6, &off), name, "inside the stub");
		cr_assert_eq(off, 6);
		checked++;
	}
	cr_assert_eq(pclose(f), 0);
	elf_syms__free(s);
	return checked;
}

/*
 * Debian's PGO-built 3.14 and 3.15 export _PyEval_EvalFrameDefault for the
 * loop's 1 KB entry only; the ~80 KB body it jumps into has no symbol. It is
 * named as GCC names such parts, whatever address it is at.
 */
Test(elf_syms, stripped_interpreters_name_the_body_of_the_evaluation_loop)
{
	struct python pys[32];
	int n = find_pythons(pys, 32), done = 0;

	for (int i = 0; i < n; i++) {
		struct elf_syms *s;
		uint64_t body, off = 0;
		const char *name;

		if (pys[i].major != 3 || pys[i].minor < 14 || pys[i].lib[0] || pys[i].free_threaded)
			continue;
		s = elf_syms__load(pys[i].path, NULL);
		cr_assert(s, "%s", pys[i].path);
		body = elf_syms__find(s, "_PyEval_EvalFrameDefault.cold");
		cr_assert_neq(body, 0, "%s: no body of the evaluation loop found", pys[i].path);
		name = elf_syms__lookup(s, body + 40000, &off);
		cr_assert_str_eq(name ? name : "", "_PyEval_EvalFrameDefault.cold", "%s: 40 KB into the body",
				 pys[i].path);
		cr_assert_eq(off, 40000);
		elf_syms__free(s);
		done++;
	}
	if (getenv("CI"))
		cr_assert_geq(done, 2, "CI: Debian's 3.14 and 3.15 must be here (make deps)");
	if (!done)
		cr_skip_test("no stripped CPython 3.14+ here");
}

Test(elf_syms, plt_stubs_are_named_after_their_target)
{
	char lib[PATH_MAX];

	cr_assert(realpath(FIXTURE("libfixture.so"), lib));
	/* getpid@plt and getppid@plt in .plt, __cxa_finalize@plt in .plt.got. */
	cr_assert_eq(check_plt_against_objdump(lib), 3);
	/* Debian's libc: free@plt and malloc@plt in .plt.got, and .plt stubs
	 * in another order than .rela.plt's relocations (IRELATIVE ones, for
	 * its ifuncs, stay "[plt]": objdump calls them *ABS*+0x...@plt). */
	cr_assert_geq(check_plt_against_objdump("/lib/x86_64-linux-gnu/libc.so.6"), 2);
}

Test(elf_syms, not_an_elf_file)
{
	const char *path = write_temp("just text\n");

	cr_assert_null(elf_syms__load(path, NULL));
	cr_assert_eq(errno, ENOEXEC);
	unlink(path);
	cr_assert_null(elf_syms__load("/nonexistent", NULL));
	cr_assert_eq(errno, ENOENT);
}

Test(procs, user_addresses_of_a_live_process_become_frames)
{
	char lib[PATH_MAX];
	struct profile *p = profile__new();
	struct procs *t = procs__new(p);
	void *h;

	h = open_fixture(lib);
	struct proc *me = NULL;
	procs__get(t, &me, (uint32_t)getpid(), 1);
	char *fn = must_dlsym(h, "fixture_c_function");

	/* A return address just past the function's first byte names the function. */
	const struct frame *f = profile__frame_at(p, procs__user_frame(t, me, (uint64_t)fn + 1, 0, 2));
	cr_assert_eq(f->kind, FRAME_NATIVE);
	cr_assert_str_eq(profile__str_at(p, f->name), "fixture_c_function");
	cr_assert_str_eq(profile__str_at(p, f->module), lib);

	f = profile__frame_at(p, procs__user_frame(t, me, 0x10, 1, 3));
	cr_assert_eq(f->name, 0);
	cr_assert_eq(f->module, 0);
	cr_assert_eq(procs__seen(t), 1);
	procs__drop(t, me);
	procs__free(t);
	profile__free(p);
	dlclose(h);
}

/* The recorder's path: a stripped library's local function is named from
 * the debug file in the configured directory (looked up under the
 * process's root first, /proc/self/root here). */
Test(procs, stripped_library_is_named_from_the_debug_dirs)
{
	char lib[PATH_MAX], dir[PATH_MAX];
	struct profile *p = profile__new();
	struct procs *t = procs__new(p);

	cr_assert(realpath(FIXTURE("libfixture-stripped.so"), lib));
	cr_assert(realpath(FIXTURE("debug"), dir));
	const char *const dirs[] = { dir, NULL };
	procs__set_debug_dirs(t, dirs);
	void *h = dlopen(lib, RTLD_NOW);
	cr_assert(h);
	void *(*local_addr)(void) = (void *(*)(void))must_dlsym(h, "fixture_local_addr");
	struct proc *me = NULL;
	procs__get(t, &me, (uint32_t)getpid(), 1);
	const struct frame *f = profile__frame_at(p, procs__user_frame(t, me, (uint64_t)local_addr(), 1, 2));
	cr_assert_str_eq(profile__str_at(p, f->name), "local_helper(int)");
	procs__drop(t, me);
	procs__free(t);
	profile__free(p);
	dlclose(h);
}

/* Naming can fall seconds behind sampling (an emulated CPU; a loaded host):
 * a process gone before its samples are named keeps the last maps read of
 * it, its files' symbols, and its generation (its unwinder stays), whether
 * it is reaped (no maps file) or a zombie (an empty one). */
Test(procs, a_process_gone_before_its_samples_are_named_keeps_its_maps)
{
	const uint64_t ms = 1000000ULL;
	char lib[PATH_MAX];
	struct profile *p = profile__new();
	struct procs *t = procs__new(p);

	void *h = open_fixture(lib);
	char *fn = must_dlsym(h, "fixture_c_function");
	for (int reaped = 0; reaped < 2; reaped++) {
		pid_t child = fork();
		if (!child) {
			pause();
			_exit(0);
		}
		struct proc *pc = NULL;
		procs__get(t, &pc, (uint32_t)child, 1 * ms);
		const struct frame *f = profile__frame_at(p, procs__user_frame(t, pc, (uint64_t)fn, 1, 2 * ms));
		cr_assert_str_eq(profile__str_at(p, f->name), "fixture_c_function");
		uint64_t gen = procs__maps_gen(pc);

		kill(child, SIGKILL);
		if (reaped)
			waitpid(child, NULL, 0);
		else /* a zombie: its maps file reads empty */
			waitid(P_PID, (id_t)child, NULL, WEXITED | WNOWAIT);
		/* An address in no module known: the maps are read again, and
		 * the process is found gone. */
		f = profile__frame_at(p, procs__user_frame(t, pc, 0x10, 1, 100 * ms));
		cr_assert_eq(f->name, 0);
		f = profile__frame_at(p, procs__user_frame(t, pc, (uint64_t)fn, 1, 200 * ms));
		cr_assert_str_eq(profile__str_at(p, f->name), "fixture_c_function", "reaped %d", reaped);
		cr_assert_str_eq(profile__str_at(p, f->module), lib);
		cr_assert_eq(procs__maps_gen(pc), gen, "reaped %d: its unwinder stays", reaped);
		cr_assert_not(procs__rescan_unknown(t, pc, 300 * ms), "not read again");
		if (!reaped)
			waitpid(child, NULL, 0);
		procs__drop(t, pc);
	}
	procs__free(t);
	profile__free(p);
	dlclose(h);
}

/* Naming behind sampling looks at a live process every 500 ms and reads
 * the symbols of what it maps: a library it loaded, then exited, is named
 * in the samples named after its exit. */
Test(procs, a_library_loaded_then_exited_is_named_when_naming_is_behind)
{
	const uint64_t ms = 1000000ULL;
	char lib[PATH_MAX];
	struct profile *p = profile__new();
	struct procs *t = procs__new(p);
	int go[2], back[2];

	cr_assert(realpath(FIXTURE("libfixture.so"), lib));
	cr_assert(!pipe(go) && !pipe(back));
	pid_t child = fork();
	if (!child) {
		char c;
		void *fn = NULL;

		if (read(go[0], &c, 1) == 1) {
			void *h = dlopen(lib, RTLD_NOW);
			fn = h ? dlsym(h, "fixture_c_function") : NULL;
		}
		if (write(back[1], &fn, sizeof(fn)) != sizeof(fn))
			_exit(1);
		pause();
		_exit(0);
	}
	struct proc *pc = NULL;
	void *fn = NULL;
	procs__get(t, &pc, (uint32_t)child, 1 * ms); /* before the library */
	cr_assert_eq(write(go[1], "x", 1), 1);
	cr_assert_eq(read(back[0], &fn, sizeof(fn)), (ssize_t)sizeof(fn));
	cr_assert_not_null(fn);
	procs__refresh_behind(t, pc, 300 * ms);
	cr_assert_eq(procs__files(t), 0, "not again within 500 ms");
	procs__refresh_behind(t, pc, 600 * ms);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	const struct frame *f = profile__frame_at(p, procs__user_frame(t, pc, (uint64_t)fn, 1, 700 * ms));
	cr_assert_str_eq(profile__str_at(p, f->name), "fixture_c_function");
	cr_assert_str_eq(profile__str_at(p, f->module), lib);
	procs__drop(t, pc);
	procs__free(t);
	profile__free(p);
	for (int i = 0; i < 2; i++) {
		close(go[i]);
		close(back[i]);
	}
}

/* A file's symbols stay while any known process maps it, and a minute
 * after the last one is gone; then they are freed (and read again when a
 * process maps the file again). When a process goes is the process
 * table's to say (test_processes.c). */
Test(procs, symbols_of_files_no_process_maps_are_freed_after_a_minute)
{
	const uint64_t s = 1000000000ULL;
	char lib[PATH_MAX];
	struct profile *p = profile__new();
	struct procs *t = procs__new(p);

	void *h = open_fixture(lib);
	char *fn = must_dlsym(h, "fixture_c_function");
	pid_t child = fork();
	if (!child) {
		pause();
		_exit(0);
	}
	uint32_t me = (uint32_t)getpid(), other = (uint32_t)child;
	struct proc *pm = NULL, *pc = NULL;
	procs__get(t, &pm, me, 1);
	procs__get(t, &pc, other, 1);
	const struct frame *f = profile__frame_at(p, procs__user_frame(t, pm, (uint64_t)fn, 1, 2));
	cr_assert_str_eq(profile__str_at(p, f->name), "fixture_c_function");
	f = profile__frame_at(p, procs__user_frame(t, pc, (uint64_t)fn, 1, 2));
	cr_assert_str_eq(profile__str_at(p, f->name), "fixture_c_function");
	cr_assert_eq(procs__files(t), 1); /* one file, shared */

	procs__drop(t, pm);
	procs__sweep(t, 100 * s);
	cr_assert_eq(procs__files(t), 1, "still mapped by the child");

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	procs__exit(pc, 100 * s);
	procs__drop(t, pc); /* the child is forgotten */
	procs__sweep(t, 150 * s);
	cr_assert_eq(procs__files(t), 1, "kept for a minute");
	procs__sweep(t, 165 * s);
	cr_assert_eq(procs__files(t), 0);

	pm = NULL;
	procs__get(t, &pm, me, 170 * s);
	f = profile__frame_at(p, procs__user_frame(t, pm, (uint64_t)fn, 1, 171 * s));
	cr_assert_str_eq(profile__str_at(p, f->name), "fixture_c_function");
	cr_assert_eq(procs__files(t), 1);
	procs__drop(t, pm);
	procs__free(t);
	profile__free(p);
	dlclose(h);
}

Test(procs, library_loaded_after_first_sight_is_found_by_rescan)
{
	char lib[PATH_MAX];
	struct profile *p = profile__new();
	struct procs *t = procs__new(p);

	cr_assert(realpath(FIXTURE("libfixture-stripped.so"), lib));
	struct proc *me = NULL;
	procs__get(t, &me, (uint32_t)getpid(), 1);
	void *h = dlopen(lib, RTLD_NOW); /* after the maps were read */
	cr_assert(h);
	char *fn = must_dlsym(h, "fixture_c_function");
	/* 1 s later: past the rescan interval. */
	const struct frame *f = profile__frame_at(p, procs__user_frame(t, me, (uint64_t)fn, 1, 1000000001ULL));
	cr_assert_str_eq(profile__str_at(p, f->name), "fixture_c_function");
	procs__drop(t, me);
	procs__free(t);
	profile__free(p);
	dlclose(h);
}

Test(procs, rescan_for_unknown_code_changes_the_generation_only_on_change)
{
	char lib[PATH_MAX];
	struct profile *p = profile__new();
	struct procs *t = procs__new(p);
	const uint64_t ms = 1000000ULL;

	cr_assert(realpath(FIXTURE("libunwind_fixture.so"), lib));
	struct proc *me = NULL;
	procs__get(t, &me, (uint32_t)getpid(), 1);
	uint64_t gen = procs__maps_gen(me);

	cr_assert_not(procs__rescan_unknown(t, me, 20 * ms), "nothing loaded: same maps");
	cr_assert_eq(procs__maps_gen(me), gen);
	void *h = dlopen(lib, RTLD_NOW);
	cr_assert(h, "%s", dlerror());
	cr_assert_not(procs__rescan_unknown(t, me, 25 * ms), "within 10 ms of the last read");
	cr_assert(procs__rescan_unknown(t, me, 31 * ms), "the library was loaded");
	cr_assert_neq(procs__maps_gen(me), gen);
	/* Its code is now known. */
	char *fn = must_dlsym(h, "uw_leaf");
	const struct frame *f = profile__frame_at(p, procs__user_frame(t, me, (uint64_t)fn, 1, 32 * ms));
	cr_assert_str_eq(profile__str_at(p, f->name), "uw_leaf");
	procs__drop(t, me);
	procs__free(t);
	profile__free(p);
	dlclose(h);
}
