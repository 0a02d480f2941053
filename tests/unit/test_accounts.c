/* /etc/passwd and /etc/group read as text (serve --user in a static binary),
 * and where each distribution keeps its CA bundle. */
#include "unit.h"

#include <string.h>

#include "push/ca_bundle.h"
#include "system/accounts.h"

static const char passwd[] = "root:x:0:0:root:/root:/bin/bash\n"
			     "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
			     "broken:x:notanumber:5::/:\n"
			     "big:x:99999999999:5::/:\n"
			     "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
			     "short:x:7"; /* no gid, no newline */

Test(accounts, user_by_name_only_from_whole_fields)
{
	uid_t uid = 1;
	gid_t gid = 1;

	cr_assert_eq(accounts__user(passwd, strlen(passwd), "nobody", &uid, &gid), 0);
	cr_assert_eq(uid, 65534);
	cr_assert_eq(gid, 65534);
	cr_assert_eq(accounts__user(passwd, strlen(passwd), "root", &uid, &gid), 0);
	cr_assert_eq(uid, 0);
	/* A prefix of a name, a malformed id, a cut line, a colon in the name: not found. */
	cr_assert_eq(accounts__user(passwd, strlen(passwd), "nob", &uid, &gid), -1);
	cr_assert_eq(accounts__user(passwd, strlen(passwd), "broken", &uid, &gid), -1);
	cr_assert_eq(accounts__user(passwd, strlen(passwd), "big", &uid, &gid), -1);
	cr_assert_eq(accounts__user(passwd, strlen(passwd), "short", &uid, &gid), -1);
	cr_assert_eq(accounts__user(passwd, strlen(passwd), "root:x", &uid, &gid), -1);
	cr_assert_eq(accounts__user(passwd, strlen(passwd), "", &uid, &gid), -1);
}

Test(accounts, groups_primary_first_then_memberships)
{
	static const char group[] = "root:x:0:\n"
				    "adm:x:4:syslog,alice\n"
				    "alice:x:1000:\n"
				    "audio:x:29:bob,alice,carol\n"
				    "aliceish:x:30:alicex,xalice\n"
				    "dup:x:1000:alice\n"
				    "last:x:31:alice";
	gid_t g[8];
	size_t n = accounts__groups(group, strlen(group), "alice", 1000, g, 8);

	cr_assert_eq(n, 4);
	cr_assert_eq(g[0], 1000);
	cr_assert_eq(g[1], 4);
	cr_assert_eq(g[2], 29);
	cr_assert_eq(g[3], 31);
	/* Bounded by max. */
	cr_assert_eq(accounts__groups(group, strlen(group), "alice", 1000, g, 2), 2);
	cr_assert_eq(accounts__groups(group, strlen(group), "nobody", 65534, g, 8), 1);
}

Test(accounts, read_cuts_at_a_whole_line_and_refuses_non_files)
{
	size_t len = 0;
	char *text = accounts__read(write_temp("a:x:1:1::/:\n"), &len);

	cr_assert_not_null(text);
	cr_assert_eq(len, 12);
	cr_assert_str_eq(text, "a:x:1:1::/:\n");
	free(text);
	cr_assert_null(accounts__read("/", &len));
	cr_assert_null(accounts__read("/nonexistent/passwd", &len));
}

Test(ca_bundle, environment_first_then_each_distributions_path)
{
	const char *a = write_temp("bundle a"), *b = write_temp("bundle b");
	const char *const paths[] = { "/nonexistent/ca.pem", "/", b, a, NULL };

	cr_assert_str_eq(ca_bundle__find(NULL, paths), b);
	cr_assert_str_eq(ca_bundle__find(a, paths), a);
	/* An unreadable or missing SSL_CERT_FILE falls back to the paths. */
	cr_assert_str_eq(ca_bundle__find("/nonexistent/env.pem", paths), b);
	cr_assert_str_eq(ca_bundle__find("", paths), b);
	cr_assert_null(ca_bundle__find(NULL, paths + 4));
	/* Debian's path is tried first. */
	cr_assert_str_eq(ca_bundle_paths[0], "/etc/ssl/certs/ca-certificates.crt");
}
