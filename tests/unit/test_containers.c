/*
 * Container names and ids, and Kubernetes pods, resolved from trees shaped
 * like each runtime's state (docker's data roots, containers/storage's
 * lists, nerdctl's name files), a cgroup2 tree and kubelet's pod log
 * directories; hostile state files among them (symlinks, a FIFO, a huge
 * file, bad JSON, an id that is not its directory's).
 */
#include "unit.h"
#include "fake_tree.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "base/util.h"
#include "live/live_top_args.h"
#include "profile/filter_args.h"
#include "record/record_args.h"
#include "system/container_find.h"
#include "system/pod_find.h"
#include "system/runtimes.h"

#define HEX56 "0123456789abcdef0123456789abcdef0123456789abcdef01234567"
#define ID_WEB "aaaa1111" HEX56      /* docker "web", running */
#define ID_DB "bbbb1111" HEX56       /* docker "db", running */
#define ID_OLD "cccc1111" HEX56      /* docker "old", stopped */
#define ID_SRV "dddd1111" HEX56      /* docker "srv1", in daemon.json's data root */
#define ID_PODWEB "eeee1111" HEX56   /* podman "web": the name docker's has too */
#define ID_RM "eeee2222" HEX56       /* podman --rm "rmme" */
#define ID_TRANS "eeee3333" HEX56    /* podman --transient-store "transient" */
#define ID_NERD "ffff1111" HEX56     /* nerdctl "nweb" */
#define ID_K8S1 "aaaa2222" HEX56     /* kubelet's, no runtime state read */
#define ID_K8S2 "12341111" HEX56     /* kubelet's */
#define ID_K8S3 "56781111" HEX56     /* kubelet's, systemd driver */
#define ID_LINK "99991111" HEX56     /* config.v2.json a symlink */
#define ID_FIFO "99992222" HEX56     /* config.v2.json a FIFO */
#define ID_HUGE "99993333" HEX56     /* config.v2.json of 5 MiB */
#define ID_BAD "99994444" HEX56      /* config.v2.json not JSON */
#define ID_MISMATCH "99995555" HEX56 /* config.v2.json naming another id */
#define ID_ESCAPED "99996666" HEX56  /* in a tree outside the root, a symlink away */
#define ID_REMAP "abab1111" HEX56    /* docker "remapped", under --userns-remap's UID.GID/ */
#define UID1 "0d1c2b3a-4f5e-6d7c-8b9a-0a1b2c3d4e5f"
#define UID1_OLD "11111111-2222-3333-4444-555555555555"
#define UID2 "7a6b5c4d-3e2f-1a0b-9c8d-7e6f5a4b3c2d"
#define UID2_ "7a6b5c4d_3e2f_1a0b_9c8d_7e6f5a4b3c2d"
#define UID3 "99999999-8888-7777-6666-555555555555"

static char root[64], cg[64], pods[64], outside[64];

static void build(void)
{
	char text[2048];
	int fd;

	strcpy(root, "/tmp/pyebpf-rt-XXXXXX");
	strcpy(cg, "/tmp/pyebpf-cg-XXXXXX");
	strcpy(pods, "/tmp/pyebpf-pods-XXXXXX");
	strcpy(outside, "/tmp/pyebpf-out-XXXXXX");
	cr_assert(mkdtemp(root) && mkdtemp(cg) && mkdtemp(pods) && mkdtemp(outside));

	/* docker: the default data root, and daemon.json's behind an absolute symlink (resolved in the root). */
	docker_config(root, "var/lib/docker", ID_WEB, ID_WEB, "web", true);
	docker_config(root, "var/lib/docker", ID_DB, ID_DB, "db", true);
	docker_config(root, "var/lib/docker", ID_OLD, ID_OLD, "old", false);
	put(at(root, "etc/docker/daemon.json"), "{\"data-root\": \"/srv/docker\", \"debug\": false}");
	mkdir_p(at(root, "srv"));
	cr_assert_eq(symlink("/data/docker", at(root, "srv/docker")), 0);
	docker_config(root, "data/docker", ID_SRV, ID_SRV, "srv1", true);
	docker_config(root, "var/lib/docker/100000.100000", ID_REMAP, ID_REMAP, "remapped", false);
	docker_config(root, "var/lib/docker/volumes", ID_OLD, ID_OLD, "notremapped", false);
	/* Hostile entries. */
	docker_config(root, "var/lib/docker", "not-an-id", ID_DB, "notanid", true);
	put(at(outside, "linked.json"), "{\"ID\":\"" ID_LINK "\",\"Name\":\"/linked\"}");
	mkdir_p(at(root, "var/lib/docker/containers/" ID_LINK));
	cr_assert_eq(symlink(at(outside, "linked.json"),
			     at(root, "var/lib/docker/containers/" ID_LINK "/config.v2.json")),
		     0);
	mkdir_p(at(root, "var/lib/docker/containers/" ID_FIFO));
	cr_assert_eq(mkfifo(at(root, "var/lib/docker/containers/" ID_FIFO "/config.v2.json"), 0600), 0);
	docker_config(root, "var/lib/docker", ID_HUGE, ID_HUGE, "huge", true);
	fd = open(at(root, "var/lib/docker/containers/" ID_HUGE "/config.v2.json"), O_WRONLY);
	cr_assert(fd >= 0 && ftruncate(fd, 5 << 20) == 0);
	close(fd);
	put(at(root, "var/lib/docker/containers/" ID_BAD "/config.v2.json"),
	    "{\"ID\":\"" ID_BAD "\",\"Name\":\"/bad\"");
	docker_config(root, "var/lib/docker", ID_MISMATCH, ID_WEB, "mismatch", true);

	/* podman: containers.json, --rm's volatile list, --transient-store's under the run root. */
	snprintf(text, sizeof(text),
		 "[{\"id\":\"%s\",\"names\":[\"web\"],\"image\":\"i\",\"layer\":\"l\",\"metadata\":\"{}\"}]",
		 ID_PODWEB);
	put(at(root, "var/lib/containers/storage/overlay-containers/containers.json"), text);
	put(at(root, "var/lib/containers/storage/overlay-containers/volatile-containers.json"),
	    "[{\"id\":\"" ID_RM "\",\"names\":[\"rmme\"]}]");
	put(at(root, "run/containers/storage/overlay-containers/volatile-containers.json"),
	    "[{\"id\":\"" ID_TRANS "\",\"names\":[\"transient\"]}]");
	put(at(root, "var/lib/containers/storage/overlay-images/images.json"), "[{\"id\":\"" ID_K8S1 "\"}]");

	/* nerdctl: a name file per container; nerdctl.toml's data root a symlink out of the root, which stays in it. */
	put(at(root, "var/lib/nerdctl/1935db59/names/default/nweb"), ID_NERD);
	put(at(root, "var/lib/nerdctl/1935db59/names/default/bad name"), ID_K8S2);
	put(at(outside, "nerdctl/1935db59/names/default/escaped"), ID_ESCAPED);
	put(at(root, "etc/nerdctl/nerdctl.toml"), "data_root = \"/escape\"\n");
	cr_assert_eq(symlink(at(outside, "nerdctl"), at(root, "escape")), 0);

	/* cgroups: docker's cgroupfs groups, a systemd scope, podman's, containerd's, kubelet's both ways, and
	 * directories that are no container's (the /docker parent; a short hex name). */
	mkdir_p(at(cg, "docker/%s", ID_WEB));
	mkdir_p(at(cg, "docker/%s", ID_DB));
	mkdir_p(at(cg, "docker/%s/init", ID_DB));
	mkdir_p(at(cg, "system.slice/docker-%s.scope", ID_SRV));
	mkdir_p(at(cg, "machine.slice/libpod-%s.scope", ID_PODWEB));
	mkdir_p(at(cg, "default/%s", ID_NERD));
	mkdir_p(at(cg, "kubepods/burstable/pod%s/%s", UID1, ID_K8S1));
	mkdir_p(at(cg, "kubepods/burstable/pod%s/%s", UID1, ID_K8S2));
	mkdir_p(at(cg,
		   "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod%s.slice/"
		   "cri-containerd-%s.scope",
		   UID2_, ID_K8S3));
	mkdir_p(at(cg, "deadbeef"));

	/* kubelet's log directories: two pods of one name (the older one gone), one gone entirely. */
	mkdir_p(at(pods, "default_web-0_%s", UID1));
	mkdir_p(at(pods, "default_web-0_%s", UID1_OLD));
	mkdir_p(at(pods, "kube-system_dns_%s", UID2));
	mkdir_p(at(pods, "ns_gone_%s", UID3));
	mkdir_p(at(pods, "not-a-pod"));
}

static void cleanup(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf %s %s %s %s", root, cg, pods, outside);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(containers, .init = build, .fini = cleanup);

static const struct runtime_container *has(const struct runtime_list *l, const char *id)
{
	return runtimes__find(l, id);
}

Test(containers, each_runtimes_state_read_hostile_files_left_out)
{
	struct runtime_sources src = { .root = root, .proc = NULL };
	struct runtime_list l;
	const struct runtime_container *c;

	runtimes__read(&src, &l);
	c = has(&l, ID_WEB);
	cr_assert(c && !strcmp(c->name, "web") && c->runtime == RUNTIME_DOCKER && c->running == 1);
	cr_assert(has(&l, ID_DB) && !strcmp(has(&l, ID_DB)->name, "db"));
	c = has(&l, ID_OLD);
	cr_assert(c && c->running == 0);
	c = has(&l, ID_SRV);
	cr_assert(c && !strcmp(c->name, "srv1"), "daemon.json's data root, behind a symlink");
	c = has(&l, ID_REMAP);
	cr_assert(c && !strcmp(c->name, "remapped"), "--userns-remap's state");
	c = has(&l, ID_PODWEB);
	cr_assert(c && !strcmp(c->name, "web") && c->runtime == RUNTIME_PODMAN && c->running == -1);
	cr_assert(has(&l, ID_RM) && !strcmp(has(&l, ID_RM)->name, "rmme"));
	cr_assert(has(&l, ID_TRANS) && !strcmp(has(&l, ID_TRANS)->name, "transient"));
	c = has(&l, ID_NERD);
	cr_assert(c && !strcmp(c->name, "nweb") && c->runtime == RUNTIME_NERDCTL);
	/* Refused: a symlink, a FIFO (without blocking), a huge file, bad JSON, another's id, a tree outside. */
	cr_assert_null(has(&l, ID_LINK));
	cr_assert_null(has(&l, ID_FIFO));
	cr_assert_null(has(&l, ID_HUGE));
	cr_assert_null(has(&l, ID_BAD));
	cr_assert_null(has(&l, ID_ESCAPED));
	cr_assert_null(has(&l, ID_K8S1), "images.json is no list of containers");
	for (size_t i = 0; i < l.n; i++)
		cr_assert(strcmp(l.v[i].name, "mismatch") && strcmp(l.v[i].name, "notanid") &&
				  strcmp(l.v[i].name, "bad name") && strcmp(l.v[i].name, "notremapped"),
			  "%s taken", l.v[i].name);
	cr_assert_eq(l.n, 9, "%zu containers", l.n);
	cr_assert_str_eq(l.unreadable, "");
	runtimes__free(&l);
}

static int find(const char *arg, struct container_match *m, char *why, size_t whylen)
{
	struct runtime_sources src = { .root = root, .proc = NULL };

	return container_find(&src, cg, arg, m, why, whylen);
}

Test(containers, names_and_ids_to_cgroups)
{
	struct container_match m;
	char why[2048];
	struct stat st;

	cr_assert_eq(find("db", &m, why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(m.id, ID_DB);
	cr_assert_str_eq(m.name, "db");
	cr_assert_eq(m.runtime, RUNTIME_DOCKER);
	cr_assert_str_eq(m.dir, at(cg, "docker/%s", ID_DB), "the container's group, not its init child");
	cr_assert_eq(stat(m.dir, &st), 0);
	cr_assert_eq(m.cgroup_id, (uint64_t)st.st_ino);
	cr_assert_eq(find("/db", &m, why, sizeof(why)), 0, "as docker inspect writes it: %s", why);
	cr_assert_str_eq(m.id, ID_DB);
	cr_assert_eq(find("srv1", &m, why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(m.dir, at(cg, "system.slice/docker-%s.scope", ID_SRV));
	cr_assert_eq(find("nweb", &m, why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(m.dir, at(cg, "default/%s", ID_NERD));
	/* Ids: whole, a start of 4+ digits in either case, a container no runtime's state names (kubelet's). */
	cr_assert_eq(find(ID_WEB, &m, why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(m.name, "web");
	cr_assert_eq(find("aaaa1", &m, why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(m.id, ID_WEB);
	cr_assert_eq(find("EEEE1111", &m, why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(m.id, ID_PODWEB);
	cr_assert_eq(m.runtime, RUNTIME_PODMAN);
	cr_assert_eq(find("5678", &m, why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(m.id, ID_K8S3);
	cr_assert_eq(m.runtime, RUNTIME_CGROUP);
	cr_assert_str_eq(m.name, "");
}

Test(containers, ambiguous_unknown_and_stopped_refused)
{
	struct container_match m;
	char why[2048];

	cr_assert_eq(find("aaaa", &m, why, sizeof(why)), -1);
	cr_assert_str_eq(why, "'aaaa' is the start of 2 container ids: web (aaaa11110123), aaaa22220123 (give more "
			      "of the id)");
	cr_assert_eq(find("web", &m, why, sizeof(why)), -1);
	cr_assert_str_eq(why, "2 containers are named 'web': web (docker aaaa11110123), web (podman eeee11110123) "
			      "(give the id of one)");
	char want[1024];

	cr_assert_eq(find("old", &m, why, sizeof(why)), -1);
	snprintf(want, sizeof(want),
		 "container 'old' (docker cccc11110123) is not running (no cgroup under %s holds its id)", cg);
	cr_assert_str_eq(why, want);
	cr_assert_eq(find("rmme", &m, why, sizeof(why)), -1);
	cr_assert(strstr(why, "container 'rmme' (podman eeee22220123) is not running"), "%s", why);

	/* Unknown: the running containers, named ones first. /docker is the parent of containers, not one;
	 * "deadbeef" a group whose name is hex but no container's. */
	static const char running[] = "; running here: db (bbbb11110123), nweb (ffff11110123), srv1 (dddd11110123), "
				      "web (aaaa11110123), web (eeee11110123), 123411110123, 567811110123, "
				      "aaaa22220123";

	cr_assert_eq(find("dock", &m, why, sizeof(why)), -1);
	snprintf(want, sizeof(want), "no container named 'dock'%s", running);
	cr_assert_str_eq(why, want);
	cr_assert_eq(find("dead", &m, why, sizeof(why)), -1);
	snprintf(want, sizeof(want), "no container named 'dead' or with an id starting with it%s", running);
	cr_assert_str_eq(why, want);
	cr_assert_eq(find("abc", &m, why, sizeof(why)), -1);
	snprintf(want, sizeof(want), "no container named 'abc' (an id takes 4 or more of its hex digits)%s", running);
	cr_assert_str_eq(why, want);
	/* The line stays within its buffer. */
	cr_assert_eq(find("nope", &m, why, 40), -1);
	cr_assert_eq(strlen(why), 39);
}

Test(containers, long_lists_cut_and_empty_hosts)
{
	struct runtime_sources src = { .root = outside, .proc = NULL };
	char many[64] = "/tmp/pyebpf-cgm-XXXXXX", why[2048], want[2048];
	struct container_match m;

	cr_assert(mkdtemp(many));
	cr_assert_eq(container_find(&src, many, "web", &m, why, sizeof(why)), -1);
	snprintf(want, sizeof(want),
		 "no container named 'web'; no container runs here (no container's cgroup under %s)", many);
	cr_assert_str_eq(why, want);
	for (int i = 0; i < 13; i++)
		mkdir_p(at(many, "docker/%02d%s%.6s", i, HEX56, "000000"));
	cr_assert_eq(container_find(&src, many, "web", &m, why, sizeof(why)), -1);
	cr_assert(strstr(why, "; running here: 000123456789, 010123456789, "), "%s", why);
	cr_assert(str_ends_with(why, ", 090123456789 and 3 more"), "%s", why);
	cr_assert_eq(occurrences_of(why, ", "), 9, "%s", why);
	snprintf(want, sizeof(want), "rm -rf %s", many);
	cr_assert_eq(system(want), 0);
}

Test(containers, report_names_to_ids)
{
	struct runtime_sources src = { .root = root, .proc = NULL };
	char id[128], why[1024];

	cr_assert_eq(container_id_by_name(&src, "db", id, sizeof(id), why, sizeof(why)), 1);
	cr_assert_str_eq(id, ID_DB);
	cr_assert_eq(container_id_by_name(&src, "old", id, sizeof(id), why, sizeof(why)), 1, "stopped, still known");
	cr_assert_str_eq(id, ID_OLD);
	cr_assert_eq(container_id_by_name(&src, "web", id, sizeof(id), why, sizeof(why)), -1);
	cr_assert(strstr(why, "2 containers are named 'web'"), "%s", why);
	cr_assert_eq(container_id_by_name(&src, "gone", id, sizeof(id), why, sizeof(why)), 0);
	cr_assert_str_eq(why, "no container is named 'gone' here now");
}

static int pod(const char *arg, struct pod_match **v, size_t *n, char *why, size_t whylen)
{
	return pod_find(pods, cg, arg, v, n, why, whylen);
}

Test(containers, pods_from_kubelets_layout)
{
	struct pod_match *v;
	size_t n;
	char why[2048], want[2048];
	struct stat st;

	cr_assert_eq(pod("default/web-0", &v, &n, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(n, 1, "the pod that runs, not the earlier one of its name");
	cr_assert_str_eq(v[0].uid, UID1);
	cr_assert_str_eq(v[0].dir, at(cg, "kubepods/burstable/pod%s", UID1));
	cr_assert_eq(stat(v[0].dir, &st), 0);
	cr_assert_eq(v[0].cgroup_id, (uint64_t)st.st_ino);
	cr_assert_eq(v[0].ncontainers, 2);
	free(v);
	cr_assert_eq(pod("kube-system/dns", &v, &n, why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(v[0].dir,
			 at(cg, "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod%s.slice", UID2_));
	cr_assert_eq(v[0].ncontainers, 1);
	free(v);

	cr_assert_eq(pod("ns/gone", &v, &n, why, sizeof(why)), -1);
	snprintf(want, sizeof(want), "pod 'ns/gone' (uid %s) has no cgroup under %s: it does not run on this node now",
		 UID3, cg);
	cr_assert_str_eq(why, want);
	cr_assert_null(v);
	cr_assert_eq(pod("default/nope", &v, &n, why, sizeof(why)), -1);
	snprintf(want, sizeof(want),
		 "no pod 'default/nope' on this node (no %s/default_nope_UID); running here: default/web-0, "
		 "kube-system/dns",
		 pods);
	cr_assert_str_eq(why, want);
	static const char *const bad[] = { "web-0", "default/", "/web", "Default/web", "a/b/c", "a_b/c" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(pod(bad[i], &v, &n, why, sizeof(why)), -1, "%s", bad[i]);
		cr_assert(strstr(why, "is not NAMESPACE/NAME"), "%s: %s", bad[i], why);
	}
	cr_assert_eq(pod_find("/nonexistent-pods", cg, "a/b", &v, &n, why, sizeof(why)), -1);
	cr_assert(strstr(why, "cannot list /nonexistent-pods"), "%s", why);
}

#define ARGV_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1)

/* --pod beside --container, in record and top; what they name is resolved at the start, not here. */
Test(container_args, record_and_top_take_pods, .init = cr_redirect_stderr)
{
	char *rec[] = { "record", "--pod", "shop/checkout-0", "--container", "web", "--pod", "a/b", NULL };
	char *top[] = { "top", "--pod", "shop/checkout-0", NULL };
	char *empty[] = { "record", "--pod", "", NULL };
	struct record_opts o;
	struct live_top_opts t;

	cr_assert_eq(record_args__parse(ARGV_LEN(rec), rec, &o), 0);
	cr_assert_eq(o.npods, 2);
	cr_assert_str_eq(o.pods[0], "shop/checkout-0");
	cr_assert_str_eq(o.pods[1], "a/b");
	cr_assert_eq(o.ncontainers, 1);
	cr_assert(o.all, "the machine, filtered in the kernel by cgroup");
	record_args__free(&o);
	cr_assert_eq(live_top_args__parse(ARGV_LEN(top), top, &t), 0);
	cr_assert_eq(t.rec.npods, 1);
	live_top_args__free(&t);
	cr_assert_eq(record_args__parse(ARGV_LEN(empty), empty, &o), -1);
	fflush(stderr);
	cr_assert_stderr_eq_str("pyebpf: empty value for --pod\n");
}

/* report --container: an id's start as given; a name this host's runtimes do not know matches the
 * recording's own names; what no runtime allows in a name or an id, nothing. */
Test(container_args, report_names_match_the_recorded_names)
{
	struct filter f;

	args_begin();
	filter__init(&f);
	cr_assert_eq(filter_args__option(&f, OPT_FILTER_CONTAINER, "5B84"), 1);
	cr_assert_eq(filter_args__check(&f), 0);
	cr_assert_str_eq(f.containers[0], "5b84", "ids are written in lower case");
	filter__free(&f);
	args_begin();
	filter__init(&f);
	cr_assert_eq(filter_args__option(&f, OPT_FILTER_CONTAINER, "pyebpf-unit-no-such-container"), 1);
	cr_assert_eq(filter_args__check(&f), 0);
	cr_assert_eq(f.ncontainer_names, 1);
	cr_assert_str_eq(f.container_names[0], "pyebpf-unit-no-such-container");

	/* Samples of two containers named web (a recreation: two ids) and one of db. */
	struct profile *p = profile__new();
	struct sample_labels web1 = { .pid = 1,
				      .container = profile__str(p, "aaaa11110123"),
				      .container_name = profile__str(p, "web") },
			     web2 = { .pid = 2,
				      .container = profile__str(p, "bbbb22220123"),
				      .container_name = profile__str(p, "web") },
			     db = { .pid = 3,
				    .container = profile__str(p, "cccc33330123"),
				    .container_name = profile__str(p, "db") };

	cr_assert_not(filter__keep(&f, p, &web1, 0));
	filter__free(&f);
	args_begin();
	filter__init(&f);
	cr_assert_eq(filter_args__option(&f, OPT_FILTER_CONTAINER, "pyebpf-unit-web"), 1);
	cr_assert_eq(filter_args__check(&f), 0);
	f.container_names[0] = "web"; /* as if given: no container of that name runs here */
	cr_assert(filter__keep(&f, p, &web1, 0));
	cr_assert(filter__keep(&f, p, &web2, 0));
	cr_assert_not(filter__keep(&f, p, &db, 0));
	filter__free(&f);
	args_begin();
	filter__init(&f);
	cr_assert_eq(filter_args__option(&f, OPT_FILTER_CONTAINER, "cccc"), 1);
	cr_assert_eq(filter_args__check(&f), 0);
	cr_assert_not(filter__keep(&f, p, &web1, 0));
	cr_assert(filter__keep(&f, p, &db, 0));
	filter__free(&f);
	profile__free(p);
}
