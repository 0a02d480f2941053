/* Pushing without the network: URLs, secrets, backoff, the journal, series and
 * the Pyroscope request, pruning that keeps unsent files. */
#include "unit.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "system/cgroups.h"
#include "profile/profile.h"
#include "push/backoff.h"
#include "push/endpoint.h"
#include "push/journal.h"
#include "push/pyroscope_req.h"
#include "push/otlp_req.h"
#include "otlp.pb-c.h"
#include "push/secret.h"
#include "push/series.h"
#include "pyroscope.pb-c.h"
#include "base/gzip.h"
#include "profile.pb-c.h"
#include "archive/rotation.h"
#include "base/util.h"
#include "read/pprof.h"
#include "write/pprof.h"

static void url_ok(enum push_kind k, const char *arg, const char *want_url)
{
	struct push_endpoint e;
	char why[256] = "";

	cr_assert_eq(push_endpoint__parse(&e, k, arg, why, sizeof(why)), 0, "%s: %s", arg, why);
	cr_assert_str_eq(e.url, want_url);
	push_endpoint__free(&e);
}

static void url_bad(const char *arg, const char *want_why)
{
	struct push_endpoint e;
	char why[256] = "";

	cr_assert_eq(push_endpoint__parse(&e, PUSH_PYROSCOPE, arg, why, sizeof(why)), -1, "%s", arg);
	cr_assert(strstr(why, want_why), "%s: '%s' lacks '%s'", arg, why, want_why);
	cr_assert_null(strstr(why, "hunter2"), "a refused secret is never repeated");
}

Test(push, urls)
{
	url_ok(PUSH_PYROSCOPE, "http://localhost:4040", "http://localhost:4040/push.v1.PusherService/Push");
	url_ok(PUSH_PYROSCOPE, "https://p.example/prefix/", "https://p.example/prefix/push.v1.PusherService/Push");
	url_ok(PUSH_PYROSCOPE, "http://[::1]:4040", "http://[::1]:4040/push.v1.PusherService/Push");
	url_ok(PUSH_OTLP, "http://127.0.0.1:4318", "http://127.0.0.1:4318/v1development/profiles");
	url_ok(PUSH_OTLP, "http://c:4318/v1development/profiles", "http://c:4318/v1development/profiles");
	url_bad("ftp://x", "unknown scheme 'ftp'");
	url_bad("localhost:4040", "not a URL");
	url_bad("http://", "no host");
	url_bad("http://:4040", "no host");
	url_bad("http://h:0", "invalid port");
	url_bad("http://h:70000", "invalid port");
	url_bad("http://h:12a", "invalid port");
	url_bad("http://admin:hunter2@h:4040", "credentials in the URL are refused");
	url_bad("http://h/x?y=1", "query or fragment");
	url_bad("http://h/a b", "no spaces or control");
	url_bad("http://h/\x1b[2J", "no spaces or control");
	url_bad("http://[::1", "closing ']'");
}

Test(push, backend_keys_differ_by_kind_url_and_tenant)
{
	struct push_endpoint a, b;
	char why[128], ka[17], kb[17], kt[17];

	cr_assert_eq(push_endpoint__parse(&a, PUSH_PYROSCOPE, "http://h:1", why, sizeof(why)), 0);
	cr_assert_eq(push_endpoint__parse(&b, PUSH_OTLP, "http://h:1", why, sizeof(why)), 0);
	push_endpoint__key(&a, NULL, ka);
	push_endpoint__key(&b, NULL, kb);
	push_endpoint__key(&a, "team-a", kt);
	cr_assert_eq(strlen(ka), 16);
	cr_assert_str_neq(ka, kb);
	cr_assert_str_neq(ka, kt);
	push_endpoint__key(&a, NULL, kb);
	cr_assert_str_eq(ka, kb, "stable across calls (and runs: no random seed)");
	push_endpoint__free(&a);
	push_endpoint__free(&b);
}

static const char *secret_file(const char *text, mode_t mode)
{
	const char *path = write_temp(text);

	cr_assert_eq(chmod(path, mode), 0);
	return path;
}

Test(push, secrets_come_from_private_files)
{
	char buf[SECRET_MAX + 2], why[512];
	const char *p;

	p = secret_file("s3cret-token\n", 0600);
	cr_assert_eq(secret_read(p, "--bearer-token-file", buf, sizeof(buf), why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(buf, "s3cret-token", "the line end is not part of it");
	unlink(p);
	p = secret_file("s3cret-token\n", 0644);
	cr_assert_eq(secret_read(p, "--bearer-token-file", buf, sizeof(buf), why, sizeof(why)), -1);
	cr_assert(strstr(why, "can be read or written by other users (mode 644): chmod 600 it"), "%s", why);
	cr_assert_null(strstr(why, "s3cret"), "the secret is never in a message");
	unlink(p);
	p = secret_file("\n", 0600);
	cr_assert_eq(secret_read(p, "--basic-auth-file", buf, sizeof(buf), why, sizeof(why)), -1);
	cr_assert(strstr(why, "is empty"), "%s", why);
	unlink(p);
	p = secret_file("a\nb\n", 0400);
	cr_assert_eq(secret_read(p, "--basic-auth-file", buf, sizeof(buf), why, sizeof(why)), -1);
	cr_assert(strstr(why, "more than one line"), "%s", why);
	unlink(p);
	p = secret_file("tok\x01en", 0600);
	cr_assert_eq(secret_read(p, "--bearer-token-file", buf, sizeof(buf), why, sizeof(why)), -1);
	cr_assert(strstr(why, "control character"), "%s", why);
	unlink(p);
	cr_assert_eq(secret_read("/nonexistent/x", "--bearer-token-file", buf, sizeof(buf), why, sizeof(why)), -1);
	cr_assert(strstr(why, "cannot read --bearer-token-file '/nonexistent/x'"), "%s", why);
	cr_assert_eq(secret_read("/tmp", "--bearer-token-file", buf, sizeof(buf), why, sizeof(why)), -1);
	cr_assert(strstr(why, "not a regular file"), "%s", why);
	cr_assert_eq(secret_check_basic("user:pw", why, sizeof(why)), 0);
	cr_assert_eq(secret_check_basic("userpw", why, sizeof(why)), -1);
	cr_assert_eq(secret_check_basic(":pw", why, sizeof(why)), -1);
}

Test(push, secret_behind_a_symlink_is_refused)
{
	char buf[64], why[512], link[] = "/tmp/pyebpf-unit-link-XXXXXX";
	const char *p = secret_file("tok\n", 0600);
	int fd = mkstemp(link);

	cr_assert(fd >= 0);
	close(fd);
	unlink(link);
	cr_assert_eq(symlink(p, link), 0);
	cr_assert_eq(secret_read(link, "--bearer-token-file", buf, sizeof(buf), why, sizeof(why)), -1);
	cr_assert(strstr(why, "symbolic link"), "%s", why);
	unlink(link);
	unlink(p);
}

Test(push, backoff_doubles_to_five_minutes_with_jitter)
{
	cr_assert_float_eq(backoff_delay(1, 0), 0.5, 1e-9);
	cr_assert_float_eq(backoff_delay(2, 0), 1.0, 1e-9);
	cr_assert_float_eq(backoff_delay(5, 0), 8.0, 1e-9);
	cr_assert_float_eq(backoff_delay(40, 0), 300.0, 1e-9, "capped");
	cr_assert_float_eq(backoff_delay(1000000, 0), 300.0, 1e-9);
	cr_assert_float_eq(backoff_delay(3, 0.999999), 2.0 - 1.0 * 0.999999, 1e-6, "at most half taken off");
	cr_assert_float_eq(backoff_wait(1, 0, 30), 30.0, 1e-9, "Retry-After longer than the backoff wins");
	cr_assert_float_eq(backoff_wait(12, 0, 3), 300.0, 1e-9, "a shorter one does not shorten it");
	cr_assert_float_eq(backoff_wait(1, 0, 1e9), RETRY_AFTER_MAX_S, 1e-9);
}

Test(push, verdicts)
{
	cr_assert_eq(push_verdict_of(200), PUSH_SENT);
	cr_assert_eq(push_verdict_of(204), PUSH_SENT);
	cr_assert_eq(push_verdict_of(0), PUSH_RETRY, "no answer");
	cr_assert_eq(push_verdict_of(429), PUSH_RETRY);
	cr_assert_eq(push_verdict_of(503), PUSH_RETRY);
	cr_assert_eq(push_verdict_of(500), PUSH_RETRY);
	cr_assert_eq(push_verdict_of(408), PUSH_RETRY);
	cr_assert_eq(push_verdict_of(401), PUSH_SETUP);
	cr_assert_eq(push_verdict_of(403), PUSH_SETUP);
	cr_assert_eq(push_verdict_of(404), PUSH_SETUP);
	cr_assert_eq(push_verdict_of(302), PUSH_SETUP, "a redirect is the URL's, not the interval's");
	cr_assert_eq(push_verdict_of(407), PUSH_SETUP);
	cr_assert_eq(push_verdict_of(421), PUSH_SETUP);
	cr_assert_eq(push_verdict_of(400), PUSH_REJECTED);
	cr_assert_eq(push_verdict_of(413), PUSH_REJECTED);
	cr_assert_eq(push_verdict_of(422), PUSH_REJECTED);
}

#define N1 "pyebpf-20261126T100000.000Z-000001.pb.gz"
#define N2 "pyebpf-20261126T100015.000Z-000002.pb.gz"
#define N3 "pyebpf-20261126T100030.000Z-000003.pb.gz"

Test(push, journal_lines)
{
	struct push_journal *j = push_journal__new_memory();
	const char text[] = "# pyebpf push journal: http://h\n"
			    "sent " N1 "\n"
			    "rejected " N2 " 400\n"
			    "sent ../../etc/passwd\n"
			    "sent " N3 " trailing\n"
			    "garbage\n"
			    "rejected " N3 " 999\n"
			    "maybe " N2 "\n"
			    "sent " N3; /* a last line cut short by a crash still counts if whole */

	cr_assert_eq(push_journal__parse(j, text, sizeof(text) - 1), 4);
	cr_assert_eq(push_journal__state(j, N1), JOURNAL_SENT);
	cr_assert_eq(push_journal__state(j, N2), JOURNAL_MAYBE, "the last line of a name wins");
	cr_assert_eq(push_journal__state(j, N3), JOURNAL_SENT);
	cr_assert_eq(push_journal__state(j, "pyebpf-20261126T100045.000Z-000004.pb.gz"), JOURNAL_UNSENT);
	cr_assert_eq(push_journal__count(j, JOURNAL_SENT), 2);
	cr_assert_eq(push_journal__count(j, JOURNAL_REJECTED), 0);
	cr_assert_eq(push_journal__count(j, JOURNAL_MAYBE), 1);
	push_journal__close(j);
}

static int temp_dir(char *dir)
{
	strcpy(dir, "/tmp/pyebpf-unit-push-XXXXXX");
	cr_assert(mkdtemp(dir));
	return open(dir, O_RDONLY | O_DIRECTORY);
}

Test(push, journal_survives_reopen_and_forgets_deleted_files)
{
	char dir[64], why[256], path[256];
	int fd = temp_dir(dir);
	struct push_journal *j;

	for (const char *const *n = (const char *const[]){ N1, N2, N3, NULL }; *n; n++) {
		snprintf(path, sizeof(path), "%s/%s", dir, *n);
		close(open(path, O_CREAT | O_WRONLY, 0644));
	}
	j = push_journal__open(fd, "0123456789abcdef", "http://h", why, sizeof(why));
	cr_assert(j, "%s", why);
	cr_assert_eq(push_journal__mark(j, N1, JOURNAL_SENT, 200), 0);
	cr_assert_eq(push_journal__mark(j, N2, JOURNAL_REJECTED, 413), 0);
	push_journal__close(j);
	j = push_journal__open(fd, "0123456789abcdef", "http://h", why, sizeof(why));
	cr_assert(j, "%s", why);
	cr_assert_eq(push_journal__state(j, N1), JOURNAL_SENT);
	cr_assert_eq(push_journal__state(j, N2), JOURNAL_REJECTED);
	cr_assert_eq(push_journal__state(j, N3), JOURNAL_UNSENT);
	push_journal__close(j);
	snprintf(path, sizeof(path), "%s/%s", dir, N1);
	unlink(path);
	j = push_journal__open(fd, "0123456789abcdef", "http://h", why, sizeof(why));
	cr_assert_eq(push_journal__count(j, JOURNAL_SENT), 0, "the deleted file's line is gone");
	cr_assert_eq(push_journal__count(j, JOURNAL_REJECTED), 1);
	push_journal__close(j);
	/* Another backend's journal is its own. */
	j = push_journal__open(fd, "fedcba9876543210", "http://other", why, sizeof(why));
	cr_assert_eq(push_journal__state(j, N2), JOURNAL_UNSENT);
	push_journal__close(j);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	cr_assert_eq(system(path), 0);
	close(fd);
}

Test(push, journal_that_is_a_symlink_is_refused)
{
	char dir[64], why[256] = "", path[256];
	int fd = temp_dir(dir);

	snprintf(path, sizeof(path), "%s/.pyebpf-push-0123456789abcdef.journal", dir);
	cr_assert_eq(symlink("/etc/passwd", path), 0);
	cr_assert_null(push_journal__open(fd, "0123456789abcdef", "http://h", why, sizeof(why)));
	cr_assert(strstr(why, "push journal"), "%s", why);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	cr_assert_eq(system(path), 0);
	close(fd);
}

Test(push, kubernetes_pod_uids_from_cgroup_paths)
{
	char out[64];

	cr_assert_str_eq(
		k8s_pod_uid_of("/kubepods.slice/kubepods-burstable.slice/"
			       "kubepods-burstable-pod3f2e1a0b_1c2d_4e5f_8a9b_0c1d2e3f4a5b.slice/"
			       "cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
			       out, sizeof(out)),
		"3f2e1a0b-1c2d-4e5f-8a9b-0c1d2e3f4a5b");
	cr_assert_str_eq(k8s_pod_uid_of("/kubepods.slice/kubepods-pod3F2E1A0B_1C2D_4E5F_8A9B_0C1D2E3F4A5B.slice/"
					"crio-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
					out, sizeof(out)),
			 "3f2e1a0b-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "guaranteed QoS has no class slice");
	cr_assert_str_eq(k8s_pod_uid_of("/kubepods/besteffort/pod3f2e1a0b-1c2d-4e5f-8a9b-0c1d2e3f4a5b/"
					"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
					out, sizeof(out)),
			 "3f2e1a0b-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "cgroupfs driver");
	cr_assert_str_eq(k8s_pod_uid_of("/system.slice/docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456"
					"789abcdef.scope",
					out, sizeof(out)),
			 "", "a container outside Kubernetes");
	cr_assert_str_eq(k8s_pod_uid_of("/user.slice/pod3f2e1a0b-1c2d-4e5f-8a9b-0c1d2e3f4a5b", out, sizeof(out)), "",
			 "a pod-like name outside kubepods");
	cr_assert_str_eq(k8s_pod_uid_of("/kubepods/burstable/podnot-a-uid", out, sizeof(out)), "");
}

Test(push, text_made_valid_utf8_without_controls)
{
	char out[64];

	cr_assert_str_eq(utf8_clean("gunicorn: worker", out, sizeof(out)), "gunicorn: worker");
	cr_assert_str_eq(utf8_clean("caf\xc3\xa9", out, sizeof(out)), "caf\xc3\xa9");
	cr_assert_str_eq(utf8_clean("a\xff"
				    "b\xc3",
				    out, sizeof(out)),
			 "a?b?");
	cr_assert_str_eq(utf8_clean("\x1b[31mred", out, sizeof(out)), "?[31mred");
	cr_assert_str_eq(utf8_clean("\xed\xa0\x80", out, sizeof(out)), "???", "a surrogate");
	cr_assert_str_eq(utf8_clean("a\xc2\x9b"
				    "31mb",
				    out, sizeof(out)),
			 "a?31mb", "a C1 control (8-bit CSI)");
	cr_assert_str_eq(utf8_clean("\xe2\x80\xae"
				    "evil",
				    out, sizeof(out)),
			 "?evil", "a right-to-left override");
	cr_assert_str_eq(utf8_clean("\xe2\x81\xa6x", out, sizeof(out)), "?x", "a bidirectional isolate");
	cr_assert_str_eq(utf8_clean("\xc2\xa0\xe2\x80\x94", out, sizeof(out)), "\xc2\xa0\xe2\x80\x94",
			 "a no-break space and an em dash stay");
	cr_assert_str_eq(utf8_clean("\xc0\xaf", out, sizeof(out)), "??", "an overlong form");
	cr_assert_str_eq(utf8_clean("\xf0\x9f\x94\xa5", out, 4), "???", "no room: never half a character");
}

Test(push, labels_given_on_the_command_line)
{
	struct series_label l;
	char why[256];

	cr_assert_eq(series_parse_label("env=prod", &l, why, sizeof(why)), 0);
	cr_assert_str_eq(l.name, "env");
	cr_assert_str_eq(l.value, "prod");
	free((char *)l.name);
	cr_assert_eq(series_parse_label("region_2=eu-west=1", &l, why, sizeof(why)), 0);
	cr_assert_str_eq(l.value, "eu-west=1");
	free((char *)l.name);
	cr_assert_eq(series_parse_label("env", &l, why, sizeof(why)), -1);
	cr_assert(strstr(why, "expected KEY=VALUE"));
	cr_assert_eq(series_parse_label("2x=a", &l, why, sizeof(why)), -1);
	cr_assert_eq(series_parse_label("a-b=c", &l, why, sizeof(why)), -1);
	cr_assert_eq(series_parse_label("__name__=x", &l, why, sizeof(why)), -1);
	cr_assert(strstr(why, "backend's own"));
	cr_assert_eq(series_parse_label("env=", &l, why, sizeof(why)), -1);
	cr_assert_eq(series_parse_label("env=a\nb", &l, why, sizeof(why)), -1);
}

/* Two gunicorn workers and a python3 worker in a pod, CPU and off-CPU time. */
static struct profile *fleet_profile(void)
{
	struct profile *p = profile__new();
	struct profile_meta *m = profile__meta(p);
	struct frame fa = {
		.kind = FRAME_PYTHON, .name = profile__str(p, "handle"), .module = profile__str(p, "app.py"), .line = 3
	};
	struct frame fb = {
		.kind = FRAME_PYTHON, .name = profile__str(p, "work"), .module = profile__str(p, "job.py"), .line = 9
	};
	uint32_t a = profile__frame(p, &fa), b = profile__frame(p, &fb);
	uint32_t gunicorn = profile__str(p, "gunicorn"), py = profile__str(p, "python3");
	struct sample_labels w1 = { .pid = 101, .tid = 101, .comm = gunicorn, .thread = profile__str(p, "MainThread") };
	struct sample_labels w2 = w1, job = { .pid = 7, .tid = 8, .comm = py, .thread = profile__str(p, "bad\xff") };
	struct sample_labels io = w1;

	m->period_ns = 10000000;
	m->start_epoch_ns = 1795000000000000000LL;
	m->duration_ns = 15000000000LL;
	m->wall = 1;
	w2.pid = w2.tid = 102;
	io.offcpu = 3; /* io */
	job.container = profile__str(p, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	job.cgroup_path = profile__str(p, "/kubepods/burstable/pod3f2e1a0b-1c2d-4e5f-8a9b-0c1d2e3f4a5b/"
					  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	profile__add(p, &w1, &a, 1, 30);
	profile__add(p, &w2, &a, 1, 20);
	profile__add(p, &io, &a, 1, 7);
	profile__add(p, &job, &b, 1, 11);
	profile__add_comment(p, SERIES_HOST_COMMENT "web-7");
	return p;
}

Test(push, series_one_per_service_and_container)
{
	struct profile *p = fleet_profile();
	struct series_label env = { "env", "prod" };
	struct series_config c = { .extra = &env, .nextra = 1 };
	size_t n;
	struct push_series *s = series_split(p, &c, &n);

	cr_assert_eq(n, 2, "gunicorn's workers are one service; the pod's process another");
	cr_assert_str_eq(series_label(&s[0], "service_name"), "gunicorn");
	cr_assert_str_eq(series_label(&s[0], "host"), "web-7", "the host the file was recorded on");
	cr_assert_str_eq(series_label(&s[0], "env"), "prod");
	cr_assert_null(series_label(&s[0], "container_id"));
	cr_assert_eq(profile__total(s[0].prof), 57);
	cr_assert_eq(profile__nstacks(s[0].prof), 2, "the two workers merge: no pid in a push");
	cr_assert_str_eq(series_label(&s[1], "service_name"), "python3");
	cr_assert_str_eq(series_label(&s[1], "pod_uid"), "3f2e1a0b-1c2d-4e5f-8a9b-0c1d2e3f4a5b");
	cr_assert_str_eq(series_label(&s[1], "container_id"),
			 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	for (size_t i = 1; i < s[1].nlabels; i++)
		cr_assert_lt(strcmp(s[1].labels[i - 1].name, s[1].labels[i].name), 0, "sorted by name");
	series_free(s, n);
	c.service_name = "shop";
	s = series_split(p, &c, &n);
	cr_assert_eq(n, 2, "still split by container");
	cr_assert_str_eq(series_label(&s[0], "service_name"), "shop");
	cr_assert_str_eq(series_label(&s[1], "service_name"), "shop");
	series_free(s, n);
	profile__free(p);
}

/* p written as an interval file is and read back, as `pyebpf push DIR` reads it. */
static struct profile *through_a_file(struct profile *p)
{
	char *buf = NULL, why[256] = "";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct profile *back;

	cr_assert_eq(pprof__write(p, f), 0);
	fclose(f);
	back = pprof__read((const uint8_t *)buf, len, why, sizeof(why));
	cr_assert_not_null(back, "%s", why);
	free(buf);
	profile__free(p);
	return back;
}

/* Every series of s under service_name `service`, with label `name` = `value` (NULL: absent). */
static void all_series(struct push_series *s, size_t n, const char *service, const char *name, const char *value)
{
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		cr_assert_str_eq(series_label(&s[i], "service_name"), service, "series %zu", i);
		if (value)
			cr_assert_str_eq(series_label(&s[i], name), value, "series %zu", i);
		else
			cr_assert_null(series_label(&s[i], name), "series %zu", i);
		cr_assert_str_eq(series_label(&s[i], "host"), "web-7", "the file's host stays");
	}
}

Test(push, a_file_keeps_the_recordings_service_name_and_labels)
{
	struct series_label live[] = { { "team", "x" }, { "env", "prod" } }, team_y = { "team", "y" };
	struct series_config rec = { .service_name = "api", .extra = live, .nextra = 2 };
	struct series_config none = { 0 }, other = { .service_name = "other" },
			     relabel = { .extra = &team_y, .nextra = 1 };
	struct profile *p = fleet_profile();
	struct push_series *s;
	size_t n;

	series_note_identity(p, &rec);
	p = through_a_file(p);
	/* Pushed without flags: where the live push filed it. */
	s = series_split(p, &none, &n);
	cr_assert_eq(n, 2, "one service now, still split by container");
	all_series(s, n, "api", "team", "x");
	all_series(s, n, "api", "env", "prod");
	series_free(s, n);
	/* A flag wins, key by key: --service-name over the stored one ... */
	s = series_split(p, &other, &n);
	all_series(s, n, "other", "team", "x");
	series_free(s, n);
	/* ... and --label team=y over the stored team; env stays. */
	s = series_split(p, &relabel, &n);
	all_series(s, n, "api", "team", "y");
	all_series(s, n, "api", "env", "prod");
	series_free(s, n);
	profile__free(p);
}

Test(push, a_file_without_a_stored_identity_is_filed_as_before)
{
	struct profile *p = through_a_file(fleet_profile());
	struct series_config none = { 0 };
	size_t n;
	struct push_series *s = series_split(p, &none, &n);

	cr_assert_eq(n, 2);
	cr_assert_str_eq(series_label(&s[0], "service_name"), "gunicorn", "the command, as before");
	cr_assert_str_eq(series_label(&s[1], "service_name"), "python3");
	cr_assert_null(series_label(&s[0], "team"));
	series_free(s, n);
	profile__free(p);
}

Test(push, a_stored_identity_is_checked_as_the_flags_are)
{
	struct profile *p = fleet_profile();
	struct series_config none = { 0 };
	char long_value[2000], *note;
	struct push_series *s;
	size_t n;

	/* Each of these fails --service-name's or --label's checks: ignored. */
	profile__add_comment(p, SERIES_SERVICE_COMMENT "\x1b]0;owned\x07");
	profile__add_comment(p, SERIES_SERVICE_COMMENT);
	profile__add_comment(p, SERIES_LABEL_COMMENT "__name__=x");
	profile__add_comment(p, SERIES_LABEL_COMMENT "tty=\x1b[2J");
	profile__add_comment(p, SERIES_LABEL_COMMENT "bad\xff=1");
	profile__add_comment(p, SERIES_LABEL_COMMENT "novalue");
	memset(long_value, 'v', sizeof(long_value) - 1);
	long_value[sizeof(long_value) - 1] = 0;
	note = xasprintf("%slong=%s", SERIES_LABEL_COMMENT, long_value);
	profile__add_comment(p, note);
	free(note);
	/* The first valid name is taken; labels beyond SERIES_STORED_LABELS_MAX are not. */
	profile__add_comment(p, SERIES_SERVICE_COMMENT "api");
	profile__add_comment(p, SERIES_SERVICE_COMMENT "later");
	for (int i = 0; i < SERIES_STORED_LABELS_MAX + 5; i++) {
		note = xasprintf("%sl%d=%d", SERIES_LABEL_COMMENT, i, i);
		profile__add_comment(p, note);
		free(note);
	}
	p = through_a_file(p);
	s = series_split(p, &none, &n);
	all_series(s, n, "api", "tty", NULL);
	for (size_t i = 0; i < n; i++) {
		cr_assert_null(series_label(&s[i], "__name__"));
		cr_assert_null(series_label(&s[i], "long"));
		cr_assert_null(series_label(&s[i], "novalue"));
		cr_assert_str_eq(series_label(&s[i], "l0"), "0");
		cr_assert_str_eq(series_label(&s[i], "l63"), "63", "the ignored ones took no room");
		cr_assert_null(series_label(&s[i], "l64"), "the bound");
	}
	series_free(s, n);
	profile__free(p);
}

/* The pprof of one RawSample as a backend reads it: its one sample type and the sum of its values. */
static int64_t sample_total(const Pyroscope__RawProfileSeries *rs, const char *want_type, int64_t *time_nanos)
{
	const char *why;
	uint8_t *raw;
	size_t len;
	Perftools__Profiles__Profile *pp;
	int64_t total = 0;

	cr_assert_eq(rs->n_samples, 1);
	cr_assert_eq(gzip__inflate(rs->samples[0]->raw_profile.data, rs->samples[0]->raw_profile.len, 1 << 24, &raw,
				   &len, &why),
		     0);
	pp = perftools__profiles__profile__unpack(NULL, len, raw);
	cr_assert(pp);
	cr_assert_eq(pp->n_sample_type, 1);
	cr_assert_str_eq(pp->string_table[pp->sample_type[0]->type], want_type);
	cr_assert_str_eq(pp->string_table[pp->period_type->type], want_type);
	for (size_t i = 0; i < pp->n_sample; i++) {
		total += pp->sample[i]->value[0];
		for (size_t k = 0; k < pp->sample[i]->n_label; k++) {
			const char *key = pp->string_table[pp->sample[i]->label[k]->key];

			cr_assert(strcmp(key, "pid") && strcmp(key, "tid"), "no label makes a series per process");
		}
	}
	*time_nanos = pp->time_nanos;
	perftools__profiles__profile__free_unpacked(pp, NULL);
	free(raw);
	return total;
}

static const char *pair(const Pyroscope__RawProfileSeries *rs, const char *name)
{
	for (size_t i = 0; i < rs->n_labels; i++)
		if (!strcmp(rs->labels[i]->name, name))
			return rs->labels[i]->value;
	return NULL;
}

Test(push, pyroscope_request_has_cpu_and_wall_series)
{
	struct profile *p = fleet_profile();
	struct series_config c = { 0 };
	size_t n, np, len;
	struct push_series *s = series_split(p, &c, &n);
	uint8_t *body;
	Pyroscope__PushRequest *req;
	uint8_t *body2;
	size_t len2;

	cr_assert_eq(pyroscope_request(s, n, N1, &body, &len, &np), 0);
	cr_assert_eq(np, 4, "cpu and wall for each of the two series");
	req = pyroscope__push_request__unpack(NULL, len, body);
	cr_assert(req);
	cr_assert_eq(req->n_series, 4);
	cr_assert_str_eq(req->series[0]->labels[0]->name, "__name__");
	cr_assert_str_eq(pair(req->series[0], "__name__"), "process_cpu");
	cr_assert_str_eq(pair(req->series[1], "__name__"), "wall");
	cr_assert_str_eq(pair(req->series[0], "service_name"), "gunicorn");
	{
		int64_t t;

		cr_assert_eq(sample_total(req->series[0], "cpu", &t), 50 * 10000000LL, "off-CPU time is not CPU time");
		cr_assert_eq(t, 1795000000000000000LL, "the interval's start");
		cr_assert_eq(sample_total(req->series[1], "wall", &t), 57 * 10000000LL);
		cr_assert_eq(sample_total(req->series[3], "wall", &t), 11 * 10000000LL);
	}
	cr_assert_str_neq(req->series[0]->samples[0]->id, req->series[1]->samples[0]->id);
	cr_assert_eq(strlen(req->series[0]->samples[0]->id), 36);
	cr_assert_eq(req->series[0]->samples[0]->id[14], '4', "a version 4 UUID's layout");
	/* The same interval gives the same IDs; another interval others. */
	cr_assert_eq(pyroscope_request(s, n, N1, &body2, &len2, &np), 0);
	{
		Pyroscope__PushRequest *again = pyroscope__push_request__unpack(NULL, len2, body2);

		cr_assert_str_eq(again->series[2]->samples[0]->id, req->series[2]->samples[0]->id);
		pyroscope__push_request__free_unpacked(again, NULL);
	}
	free(body2);
	cr_assert_eq(pyroscope_request(s, n, N2, &body2, &len2, &np), 0);
	{
		Pyroscope__PushRequest *other = pyroscope__push_request__unpack(NULL, len2, body2);

		cr_assert_str_neq(other->series[2]->samples[0]->id, req->series[2]->samples[0]->id);
		pyroscope__push_request__free_unpacked(other, NULL);
	}
	free(body2);
	pyroscope__push_request__free_unpacked(req, NULL);
	free(body);
	series_free(s, n);
	profile__free(p);
}

static bool unsent_n2_n3(void *ctx, const char *name)
{
	(void)ctx;
	return !strcmp(name, N2) || !strcmp(name, N3);
}

static bool exists(const char *dir, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

Test(push, pruning_keeps_unsent_files_past_keep_not_past_max_disk)
{
	char dir[64], cmd[128];
	int fd = temp_dir(dir);
	const char *n4 = "pyebpf-20261126T100045.000Z-000004.pb.gz";
	struct rotation_prune pr = { .keep = 1, .written = n4, .now_ns = 1800000000000000000LL, .unsent = unsent_n2_n3 };

	close(fd);
	make_file(dir, N1, 100);
	make_file(dir, N2, 100);
	make_file(dir, N3, 100);
	make_file(dir, n4, 100);
	cr_assert_eq(rotation_prune(dir, &pr), 1, "only the sent file goes for --keep");
	cr_assert(!exists(dir, N1));
	cr_assert(exists(dir, N2) && exists(dir, N3) && exists(dir, n4));
	cr_assert_eq(pr.unsent_deleted, 0);
	pr.keep = 0;
	pr.max_bytes = 250;
	cr_assert_eq(rotation_prune(dir, &pr), 1, "the disk bound forces the oldest unsent file out");
	cr_assert(!exists(dir, N2));
	cr_assert(exists(dir, N3));
	cr_assert_eq(pr.unsent_deleted, 1);
	fflush(stderr);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

Test(push, kubernetes_workloads_from_pod_names)
{
	char out[128];

	cr_assert_str_eq(k8s_workload_of("web-7d9f8b6c5-x2x9z", out, sizeof(out)), "web", "a Deployment's pod");
	cr_assert_str_eq(k8s_workload_of("api-server-5c8d4b7f9-qwz2k", out, sizeof(out)), "api-server");
	cr_assert_str_eq(k8s_workload_of("node-agent-x2x9z", out, sizeof(out)), "node-agent", "a DaemonSet's pod");
	cr_assert_str_eq(k8s_workload_of("db-0", out, sizeof(out)), "db", "a StatefulSet's pod");
	cr_assert_str_eq(k8s_workload_of("redis-12", out, sizeof(out)), "redis");
	cr_assert_str_eq(k8s_workload_of("web-front", out, sizeof(out)), "web-front", "a vowel: not generated");
	cr_assert_str_eq(k8s_workload_of("standalone", out, sizeof(out)), "standalone");
	cr_assert_str_eq(k8s_workload_of("", out, sizeof(out)), "");
}

Test(push, pod_series_are_named_by_namespace_and_workload)
{
	struct profile *p = profile__new();
	struct frame fa = { .kind = FRAME_PYTHON,
			    .name = profile__str(p, "handle"),
			    .module = profile__str(p, "app.py") };
	uint32_t a = profile__frame(p, &fa);
	struct sample_labels r1 = { .pid = 1,
				    .comm = profile__str(p, "gunicorn"),
				    .k8s_pod = profile__str(p, "shop/web-7d9f8b6c5-x2x9z"),
				    .container_name = profile__str(p, "app") };
	struct sample_labels r2 = r1;
	struct series_config c = { 0 };
	struct push_series *s;
	size_t n;

	r2.k8s_pod = profile__str(p, "shop/web-7d9f8b6c5-bb2kq");
	profile__meta(p)->period_ns = 10000000;
	profile__add(p, &r1, &a, 1, 4);
	profile__add(p, &r2, &a, 1, 6);
	s = series_split(p, &c, &n);
	cr_assert_eq(n, 2, "a series per pod");
	cr_assert_str_eq(series_label(&s[0], "service_name"), "shop/web", "one service for every replica");
	cr_assert_str_eq(series_label(&s[1], "service_name"), "shop/web");
	cr_assert_str_eq(series_label(&s[0], "namespace"), "shop");
	cr_assert_str_eq(series_label(&s[1], "pod"), "web-7d9f8b6c5-bb2kq");
	cr_assert_str_eq(series_label(&s[0], "container"), "app", "the container's name in its pod");

	/* In OTLP, a pod's container is named as Kubernetes names it. */
	uint8_t *gz, *raw;
	size_t gzlen, rawlen, nprofiles;
	const char *why;
	bool named = false;

	cr_assert_eq(otlp_request(s, n, "x.pb.gz", &gz, &gzlen, &nprofiles), 0);
	cr_assert_eq(gzip__inflate(gz, gzlen, 1 << 24, &raw, &rawlen, &why), 0);
	Otlp__ExportProfilesServiceRequest *req = otlp__export_profiles_service_request__unpack(NULL, rawlen, raw);

	cr_assert(req);
	for (size_t i = 0; i < req->resource_profiles[0]->resource->n_attributes; i++) {
		const Otlp__KeyValue *kv = req->resource_profiles[0]->resource->attributes[i];

		cr_assert_str_neq(kv->key, "container.name");
		named |= !strcmp(kv->key, "k8s.container.name") && !strcmp(kv->value->string_value, "app");
	}
	cr_assert(named, "no k8s.container.name=app");
	otlp__export_profiles_service_request__free_unpacked(req, NULL);
	free(raw);
	free(gz);
	series_free(s, n);
	profile__free(p);
}

Test(push, pod_names_from_kubelets_log_directories)
{
	char dir[64], path[256], out[128], cmd[128];
	int fd = temp_dir(dir);

	close(fd);
	snprintf(path, sizeof(path), "%s/shop_web-7d9f8b6c5-x2x9z_3f2e1a0b-1c2d-4e5f-8a9b-0c1d2e3f4a5b", dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/kube-system_coredns-5d78c9869d-abcde_11111111-2222-3333-4444-555555555555",
		 dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	cr_assert_str_eq(k8s_pod_of_uid(dir, "3f2e1a0b-1c2d-4e5f-8a9b-0c1d2e3f4a5b", out, sizeof(out)),
			 "shop/web-7d9f8b6c5-x2x9z");
	cr_assert_str_eq(k8s_pod_of_uid(dir, "11111111-2222-3333-4444-555555555555", out, sizeof(out)),
			 "kube-system/coredns-5d78c9869d-abcde");
	cr_assert_str_eq(k8s_pod_of_uid(dir, "99999999-2222-3333-4444-555555555555", out, sizeof(out)), "");
	cr_assert_str_eq(k8s_pod_of_uid("/nonexistent", "x", out, sizeof(out)), "");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

Test(push, asking_pyroscope_whether_an_interval_arrived)
{
	struct profile *p = fleet_profile();
	struct series_config c = { 0 };
	size_t n, len;
	struct push_series *s = series_split(p, &c, &n);
	uint8_t *q;
	Pyroscope__SelectMergeProfileRequest *r;
	Perftools__Profiles__Profile answer = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__Sample s1 = PERFTOOLS__PROFILES__SAMPLE__INIT, s2 = PERFTOOLS__PROFILES__SAMPLE__INIT;
	Perftools__Profiles__Sample *samples[2] = { &s1, &s2 };
	int64_t v1 = 30, v2 = 12, total;
	uint8_t buf[256];

	cr_assert_eq(pyroscope_query_request(s, n, &q, &len), 0);
	r = pyroscope__select_merge_profile_request__unpack(NULL, len, q);
	cr_assert(r);
	cr_assert_str_eq(r->profile_typeid, "process_cpu:cpu:nanoseconds:cpu:nanoseconds");
	cr_assert_str_eq(r->label_selector, "{host=\"web-7\",service_name=\"gunicorn\"}");
	cr_assert_eq(r->start, 1795000000000LL - 1);
	cr_assert_eq(r->end, 1795000000000LL + 1);
	pyroscope__select_merge_profile_request__free_unpacked(r, NULL);
	free(q);
	s1.n_value = s2.n_value = 1;
	s1.value = &v1;
	s2.value = &v2;
	answer.n_sample = 2;
	answer.sample = samples;
	len = perftools__profiles__profile__pack(&answer, buf);
	cr_assert_eq(pyroscope_query_total(buf, len, &total), 0);
	cr_assert_eq(total, 42);
	cr_assert_eq(pyroscope_query_total((const uint8_t *)"\xff\xff\xff", 3, &total), -1, "not a profile");
	series_free(s, n);
	profile__free(p);
}

/* The labels of a push's pprof samples, "k=v;" each, sorted by the writer's order. */
static void push_sample_labels(const Pyroscope__RawProfileSeries *rs, char *out, size_t size)
{
	const char *why;
	uint8_t *raw;
	size_t len, at = 0;
	Perftools__Profiles__Profile *pp;

	cr_assert_eq(gzip__inflate(rs->samples[0]->raw_profile.data, rs->samples[0]->raw_profile.len, 1 << 24, &raw,
				   &len, &why),
		     0);
	pp = perftools__profiles__profile__unpack(NULL, len, raw);
	cr_assert(pp);
	out[0] = '\0';
	for (size_t i = 0; i < pp->n_sample; i++)
		for (size_t k = 0; k < pp->sample[i]->n_label; k++)
			at += (size_t)snprintf(out + at, size - at, "%s=%s;",
					       pp->string_table[pp->sample[i]->label[k]->key],
					       pp->string_table[pp->sample[i]->label[k]->str]);
	perftools__profiles__profile__free_unpacked(pp, NULL);
	free(raw);
}

/* Which request in a push: Pyroscope gets the local root's span_id and
 * span_name (its span profiles), never a series per trace; OTLP gets a
 * link to the trace and the innermost span. */
Test(push, a_request_is_a_span_profile_in_pyroscope_and_a_link_in_otlp)
{
	struct profile *p = profile__new();
	uint32_t fr = profile__frame(p, &(struct frame){ .kind = FRAME_PYTHON,
							 .name = profile__str(p, "price"),
							 .module = profile__str(p, "/shop.py"),
							 .line = 7 });
	struct sample_request rq = { .trace_id = profile__str(p, "0af7651916cd43dd8448eb211c80319c"),
				     .span_id = profile__str(p, "00f067aa0ba902b7"),
				     .span_name = profile__str(p, "price"),
				     .endpoint = profile__str(p, "GET /checkout"),
				     .root_span = profile__str(p, "b7ad6b7169203331"),
				     .ctx_key = profile__str(p, "request_id"),
				     .ctx_value = profile__str(p, "req-00042") };
	struct sample_labels l = {
		.pid = 7, .tid = 7, .comm = profile__str(p, "shop"), .request = profile__request(p, &rq)
	};
	struct series_config c = { .service_name = "shop" };
	struct push_series *s;
	size_t n, np, len, rawlen;
	uint8_t *body, *raw;
	char labels[512];
	const char *why;

	profile__meta(p)->period_ns = 10000000;
	profile__add(p, &l, &fr, 1, 5);
	s = series_split(p, &c, &n);
	cr_assert_eq(n, 1, "the request makes no series of its own");

	cr_assert_eq(pyroscope_request(s, n, N1, &body, &len, &np), 0);
	Pyroscope__PushRequest *req = pyroscope__push_request__unpack(NULL, len, body);

	cr_assert(req);
	push_sample_labels(req->series[0], labels, sizeof(labels));
	cr_assert_str_eq(labels, "comm=shop;span_id=b7ad6b7169203331;span_name=GET /checkout;endpoint=GET /checkout;");
	pyroscope__push_request__free_unpacked(req, NULL);
	free(body);

	cr_assert_eq(otlp_request(s, n, N1, &body, &len, &np), 0);
	cr_assert_eq(gzip__inflate(body, len, 1 << 24, &raw, &rawlen, &why), 0);
	Otlp__ExportProfilesServiceRequest *o = otlp__export_profiles_service_request__unpack(NULL, rawlen, raw);

	cr_assert(o);
	const Otlp__ProfilesDictionary *d = o->dictionary;
	const Otlp__Sample *sm = o->resource_profiles[0]->scope_profiles[0]->profiles[0]->samples[0];
	static const uint8_t trace[16] = { 0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd,
					   0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c },
			     span[8] = { 0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7 };
	bool endpoint = false, request_id = false;

	cr_assert_eq(d->n_link_table, 2, "the empty link and this sample's");
	cr_assert_eq(d->link_table[0]->trace_id.len, 16, "the empty link is of zeros");
	cr_assert_eq(sm->link_index, 1);
	cr_assert_eq(d->link_table[1]->trace_id.len, 16);
	cr_assert_eq(memcmp(d->link_table[1]->trace_id.data, trace, 16), 0);
	cr_assert_eq(d->link_table[1]->span_id.len, 8);
	cr_assert_eq(memcmp(d->link_table[1]->span_id.data, span, 8), 0, "the innermost span, the one running");
	for (size_t i = 0; i < sm->n_attribute_indices; i++) {
		const Otlp__KeyValueAndUnit *kv = d->attribute_table[sm->attribute_indices[i]];
		const char *key = d->string_table[kv->key_strindex];

		endpoint |= !strcmp(key, "pyebpf.endpoint") && !strcmp(kv->value->string_value, "GET /checkout");
		request_id |= !strcmp(key, "request_id") && !strcmp(kv->value->string_value, "req-00042");
	}
	cr_assert(endpoint && request_id, "the endpoint and the context label as attributes");
	otlp__export_profiles_service_request__free_unpacked(o, NULL);
	free(raw);
	free(body);
	series_free(s, n);
	profile__free(p);
}
