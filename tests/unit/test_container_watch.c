/*
 * --container followed across a restart (the same directory, a new inode),
 * a recreate under the same name (a new id), and an exit (the grace runs
 * out): a fake docker data root and cgroup tree changed between ticks whose
 * times the test gives, so no test waits for a clock.
 */
#include "unit.h"
#include "fake_tree.h"

#include "system/container_watch.h"

#define HEX56 "0123456789abcdef0123456789abcdef0123456789abcdef01234567"
#define ID_WEB "aaaa1111" HEX56  /* docker "web" */
#define ID_WEB2 "aaaa3333" HEX56 /* "web" again, recreated */
#define ID_DB "bbbb1111" HEX56   /* docker "db" */
#define ID_DB2 "bbbb1112" HEX56  /* starts as db's id does, named db2 */

#define S 1000000000ULL /* the watch's start */

static char root[64], cg[64];

/* x milliseconds after the watch's start. */
static uint64_t ms(int x)
{
	return S + (uint64_t)x * 1000000ULL;
}
static struct runtime_sources src;

static void build(void)
{
	strcpy(root, "/tmp/pyebpf-wrt-XXXXXX");
	strcpy(cg, "/tmp/pyebpf-wcg-XXXXXX");
	cr_assert(mkdtemp(root) && mkdtemp(cg));
	src = (struct runtime_sources){ .root = root, .proc = NULL };
	docker_config(root, "var/lib/docker", ID_WEB, ID_WEB, "web", true);
	docker_config(root, "var/lib/docker", ID_DB, ID_DB, "db", true);
	mkdir_p(at(cg, "docker/%s", ID_WEB));
	mkdir_p(at(cg, "docker/%s", ID_DB));
}

static void cleanup(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", root, cg);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(container_watch, .init = build, .fini = cleanup);

static uint64_t ino(const char *dir)
{
	struct stat st;

	cr_assert_eq(stat(dir, &st), 0, "%s", dir);
	return (uint64_t)st.st_ino;
}

/* A restart's new cgroup, made beside the container's while that still exists (so its inode is surely
 * another: the file system may give a freed inode to the next mkdir), then moved to its path. */
static void spare_dir(void)
{
	mkdir_p(at(cg, "docker/new"));
}

static uint64_t move_in(const char *id)
{
	rmdir(at(cg, "docker/%s", id));
	cr_assert_eq(rename(at(cg, "docker/new"), at(cg, "docker/%s", id)), 0, "%s", strerror(errno));
	return ino(at(cg, "docker/%s", id));
}

static struct container_watch *watching(const char *const args[], bool ends)
{
	struct container_watch *w = container_watch__new(&src, cg);
	struct container_match m;
	char why[2048];

	for (size_t i = 0; args[i]; i++) {
		cr_assert_eq(container_find(&src, cg, args[i], &m, why, sizeof(why)), 0, "%s", why);
		container_watch__add(w, args[i], &m);
	}
	container_watch__begin(w, S, ends);
	return w;
}

static const struct container_event *tick(struct container_watch *w, uint64_t now, size_t want)
{
	size_t n;
	const struct container_event *ev = container_watch__tick(w, now, &n);

	cr_assert_eq(n, want, "%zu events at %.2f s, not %zu: %s", n, (double)(now - S) / 1e9, want,
		     n ? ev[0].line : "");
	return ev;
}

Test(container_watch, restart_same_path_new_inode)
{
	struct container_watch *w = watching((const char *const[]){ "web", NULL }, true);
	uint64_t first = ino(at(cg, "docker/%s", ID_WEB)), second, third;
	const struct container_event *ev;

	tick(w, ms(100), 0);
	tick(w, ms(250), 0); /* looked at: still there */
	/* Replaced between two looks: gone and back in one tick, the new cgroup in BPF's place. */
	spare_dir();
	second = move_in(ID_WEB);
	ev = tick(w, ms(500), 2);
	cr_assert_eq(ev[0].kind, CONTAINER_STOPPED);
	cr_assert_eq(ev[0].old_cgroup, first);
	cr_assert_eq(ev[0].new_cgroup, 0);
	cr_assert_str_eq(ev[0].line, "container web (aaaa11110123) stopped at 0.5 s: waiting for it to start again");
	cr_assert_eq(ev[1].kind, CONTAINER_BACK);
	cr_assert_eq(ev[1].old_cgroup, 0);
	cr_assert_eq(ev[1].new_cgroup, second);
	cr_assert_str_eq(ev[1].line,
			 "container web (aaaa11110123) started again within 0.25 s (a new cgroup): recording it");

	/* A gap: gone at one look, back at the same path at a later one (no full look needed). */
	spare_dir();
	rmdir(at(cg, "docker/%s", ID_WEB));
	ev = tick(w, ms(750), 1);
	cr_assert_eq(ev[0].kind, CONTAINER_STOPPED);
	cr_assert_eq(ev[0].old_cgroup, second);
	tick(w, ms(900), 0);
	tick(w, ms(1000), 0);
	third = move_in(ID_WEB);
	tick(w, ms(1100), 0); /* not yet looked at again */
	ev = tick(w, ms(1250), 1);
	cr_assert_eq(ev[0].kind, CONTAINER_BACK);
	cr_assert_eq(ev[0].new_cgroup, third);
	cr_assert_str_eq(ev[0].line,
			 "container web (aaaa11110123) started again after 0.5 s (a new cgroup): recording it");
	tick(w, ms(1500), 0);
	tick(w, ms(9000), 0);
	cr_assert_not(container_watch__ended(w));
	container_watch__free(w);
}

Test(container_watch, recreate_by_name_is_a_new_container)
{
	struct container_watch *w = watching((const char *const[]){ "web", NULL }, true);
	const struct container_event *ev;
	uint64_t first = ino(at(cg, "docker/%s", ID_WEB)), next;

	/* docker rm -f web && docker run --name web ...: the old id's state and cgroup gone, a new id's made. */
	rmdir(at(cg, "docker/%s", ID_WEB));
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf %s/var/lib/docker/containers/%s", root, ID_WEB);
	cr_assert_eq(system(cmd), 0);
	ev = tick(w, ms(250), 1);
	cr_assert_eq(ev[0].kind, CONTAINER_STOPPED);
	cr_assert_eq(ev[0].old_cgroup, first);
	docker_config(root, "var/lib/docker", ID_WEB2, ID_WEB2, "web", true);
	mkdir_p(at(cg, "docker/%s", ID_WEB2));
	next = ino(at(cg, "docker/%s", ID_WEB2));
	tick(w, ms(500), 0);  /* the old path: nothing there */
	tick(w, ms(1000), 0); /* the full look is a second after it went */
	ev = tick(w, ms(1250), 1);
	cr_assert_eq(ev[0].kind, CONTAINER_NEW);
	cr_assert_eq(ev[0].new_cgroup, next);
	cr_assert_str_eq(
		ev[0].line,
		"container web (aaaa11110123) is back as a new container aaaa33330123 after 1.0 s: recording it");
	/* The new one is the one watched now: its directory, its lines. */
	tick(w, ms(1500), 0);
	rmdir(at(cg, "docker/%s", ID_WEB2));
	ev = tick(w, ms(1750), 1);
	cr_assert_eq(ev[0].old_cgroup, next);
	cr_assert_str_eq(ev[0].line, "container web (aaaa33330123) stopped at 1.8 s: waiting for it to start again");
	container_watch__free(w);
}

/* The start of an id stands for the container it named then: another whose id starts the same way
 * is not taken for it, and the one named comes back. */
Test(container_watch, id_prefix_follows_the_whole_id)
{
	struct container_watch *w = watching((const char *const[]){ "bbbb", NULL }, false);
	const struct container_event *ev;
	uint64_t back;

	spare_dir();
	rmdir(at(cg, "docker/%s", ID_DB));
	tick(w, ms(250), 1);
	docker_config(root, "var/lib/docker", ID_DB2, ID_DB2, "db2", true);
	mkdir_p(at(cg, "docker/%s", ID_DB2));
	for (int t = 500; t <= 5000; t += 250)
		tick(w, ms(t), 0);
	back = move_in(ID_DB);
	ev = tick(w, ms(5250), 1);
	cr_assert_eq(ev[0].kind, CONTAINER_BACK);
	cr_assert_eq(ev[0].new_cgroup, back);
	cr_assert(strstr(ev[0].line, "container db (bbbb11110123) started again after 5.0 s"), "%s", ev[0].line);
	container_watch__free(w);
}

Test(container_watch, grace_expiry_ends_a_recording_not_a_waiting_one)
{
	struct container_watch *w = watching((const char *const[]){ "web", NULL }, true);
	struct container_watch *waits = watching((const char *const[]){ "web", NULL }, false);
	const struct container_event *ev;

	spare_dir();
	rmdir(at(cg, "docker/%s", ID_WEB));
	tick(w, ms(250), 1);
	tick(waits, ms(250), 1);
	for (int t = 500; t < 3250; t += 250) {
		tick(w, ms(t), 0);
		tick(waits, ms(t), 0);
	}
	cr_assert_not(container_watch__ended(w));
	ev = tick(w, ms(3250), 1); /* gone 3 s */
	cr_assert_eq(ev[0].kind, CONTAINER_EXITED);
	cr_assert_eq(ev[0].old_cgroup | ev[0].new_cgroup, 0);
	cr_assert_str_eq(ev[0].line, "container web (aaaa11110123) exited: the recording ends");
	cr_assert(container_watch__ended(w));
	tick(w, ms(3500), 0); /* said once */

	/* --continuous, top: it waits, and picks the container up when it comes back. */
	tick(waits, ms(3250), 0);
	tick(waits, ms(60000), 0);
	cr_assert_not(container_watch__ended(waits));
	move_in(ID_WEB);
	ev = tick(waits, ms(60250), 1);
	cr_assert_eq(ev[0].kind, CONTAINER_BACK);
	cr_assert_str_eq(ev[0].line,
			 "container web (aaaa11110123) started again after 60.0 s (a new cgroup): recording it");
	container_watch__free(w);
	container_watch__free(waits);
}

Test(container_watch, several_end_when_all_have_exited)
{
	struct container_watch *w = watching((const char *const[]){ "web", "db", NULL }, true);
	const struct container_event *ev;

	rmdir(at(cg, "docker/%s", ID_WEB));
	tick(w, ms(250), 1);
	tick(w, ms(2000), 0);
	rmdir(at(cg, "docker/%s", ID_DB));
	ev = tick(w, ms(2250), 1);
	cr_assert_str_eq(ev[0].line, "container db (bbbb11110123) stopped at 2.2 s: waiting for it to start again");
	tick(w, ms(3500), 0); /* web past its grace, db not */
	cr_assert_not(container_watch__ended(w));
	ev = tick(w, ms(5250), 1);
	cr_assert_str_eq(ev[0].line, "containers web (aaaa11110123), db (bbbb11110123) exited: the recording ends");
	cr_assert(container_watch__ended(w));
	container_watch__free(w);
}

/* Names come from a runtime's state: what reaches a terminal is escaped. */
Test(container_watch, names_escaped)
{
	struct container_watch *w = container_watch__new(&src, cg);
	struct container_match m;
	char why[2048];

	cr_assert_eq(container_find(&src, cg, "web", &m, why, sizeof(why)), 0, "%s", why);
	snprintf(m.name, sizeof(m.name), "we\033[2Jb");
	container_watch__add(w, ID_WEB, &m);
	container_watch__begin(w, S, false);
	rmdir(at(cg, "docker/%s", ID_WEB));
	const struct container_event *ev = tick(w, ms(250), 1);
	cr_assert_str_eq(ev[0].line,
			 "container we\\x1b[2Jb (aaaa11110123) stopped at 0.2 s: waiting for it to start again");
	container_watch__free(w);
}
