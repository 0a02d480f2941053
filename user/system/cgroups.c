// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "system/cgroups.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>

#include "base/util.h"

int cgroup2_mount(const char *mounts_file, char *out, size_t size)
{
	FILE *f = fopen(mounts_file, "r");
	char line[4096], dev[256], dir[2048], type[64];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%255s %2047s %63s", dev, dir, type) == 3 && !strcmp(type, "cgroup2")) {
			fclose(f);
			snprintf(out, size, "%s", dir);
			return 0;
		}
	}
	fclose(f);
	return -1;
}

static int dir_id(const char *dir, uint64_t *id)
{
	struct stat st;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return -1;
	*id = (uint64_t)st.st_ino;
	return 0;
}

int cgroup_resolve(const char *mount, const char *arg, char *dir, size_t dirlen, uint64_t *id, char *why, size_t whylen)
{
	size_t m = strlen(mount);

	if (!strncmp(arg, mount, m) && (arg[m] == '/' || !arg[m]))
		snprintf(dir, dirlen, "%s", arg);
	else
		snprintf(dir, dirlen, "%s/%s", mount, arg[0] == '/' ? arg + 1 : arg);
	/* "/" or "" is the root itself. */
	if (dir[strlen(dir) - 1] == '/' && strlen(dir) > 1)
		dir[strlen(dir) - 1] = '\0';
	/* "..", "." and symlinks resolved: a path that leaves the mount
	 * ("../../etc") is not a cgroup, whatever it names on the host. */
	char real[PATH_MAX], rmount[PATH_MAX];

	if (!realpath(dir, real) || !realpath(mount, rmount)) {
		snprintf(why, whylen, "no cgroup '%s' under the cgroup2 mount %s", arg, mount);
		return -1;
	}
	m = strlen(rmount);
	if (strncmp(real, rmount, m) != 0 || (real[m] != '/' && real[m])) {
		snprintf(why, whylen, "'%s' is outside the cgroup2 mount %s", arg, mount);
		return -1;
	}
	if (dir_id(real, id)) {
		snprintf(why, whylen, "no cgroup '%s' under the cgroup2 mount %s", arg, mount);
		return -1;
	}
	snprintf(dir, dirlen, "%s", real);
	return 0;
}

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return n > 0;
}

/* The id in one path component: PREFIX-ID.scope for the runtimes (systemd's driver), or a bare 64-hex
 * id (cgroupfs's: /docker/ID, /NAMESPACE/ID for containerd, .../pod<UID>/ID for kubelet). */
static bool component_id(const char *c, size_t n, const char **id, size_t *idn)
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-", "crio-",
						"libpod-", "containerd-",     "nerdctl-" };
	const char *end = c + n;

	if (n > 6 && !strncmp(end - 6, ".scope", 6))
		end -= 6;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t p = strlen(prefixes[i]);

		if ((size_t)(end - c) > p && !strncmp(c, prefixes[i], p) && all_hex(c + p, (size_t)(end - c) - p)) {
			*id = c + p;
			*idn = (size_t)(end - c) - p;
			return true;
		}
	}
	if (end - c == 64 && all_hex(c, 64)) {
		*id = c;
		*idn = 64;
		return true;
	}
	return false;
}

const char *container_id_of(const char *cgroup_path, char *out, size_t size)
{
	const char *c = cgroup_path, *id = NULL;
	size_t idn = 0;

	out[0] = '\0';
	while (*c) {
		const char *slash = strchr(c, '/');
		size_t n = slash ? (size_t)(slash - c) : strlen(c);
		const char *cid;
		size_t cn;

		if (n && component_id(c, n, &cid, &cn)) {
			id = cid;
			idn = cn;
		}
		c += n;
		if (*c == '/')
			c++;
	}
	if (id)
		snprintf(out, size, "%.*s", (int)idn, id);
	return out;
}

/* "<36 chars of hex digits and '-' or '_' in UUID places>" at s, ending the component (or ".slice"). */
static bool pod_uid_at(const char *s, size_t n, char uid[37])
{
	static const int dashes[] = { 8, 13, 18, 23 };

	if (n != 36 && !(n == 42 && !strncmp(s + 36, ".slice", 6)))
		return false;
	for (int i = 0, d = 0; i < 36; i++) {
		char c = s[i];

		if (d < 4 && i == dashes[d]) {
			if (c != '-' && c != '_')
				return false;
			uid[i] = '-';
			d++;
		} else if (isxdigit((unsigned char)c)) {
			uid[i] = (char)tolower((unsigned char)c);
		} else {
			return false;
		}
	}
	uid[36] = 0;
	return true;
}

const char *k8s_pod_uid_of(const char *cgroup_path, char *out, size_t size)
{
	const char *c = cgroup_path;
	char uid[37];

	out[0] = '\0';
	if (!strstr(cgroup_path, "kubepods"))
		return out;
	while (*c) {
		const char *slash = strchr(c, '/');
		size_t n = slash ? (size_t)(slash - c) : strlen(c);
		const char *pod = NULL;

		/* cgroupfs: "pod<UID>"; systemd: "kubepods[-QOS]-pod<UID>.slice". */
		if (n > 3 && !strncmp(c, "pod", 3))
			pod = c + 3;
		else if (!strncmp(c, "kubepods", 8))
			for (const char *q = c; q + 4 <= c + n; q++)
				if (!strncmp(q, "-pod", 4))
					pod = q + 4;
		if (pod && pod_uid_at(pod, n - (size_t)(pod - c), uid)) {
			snprintf(out, size, "%s", uid);
			return out;
		}
		c += n;
		if (*c == '/')
			c++;
	}
	return out;
}

const char *k8s_pod_of_uid(const char *pods_dir, const char *uid, char *out, size_t size)
{
	DIR *d = opendir(pods_dir);
	struct dirent *e;
	size_t ulen = strlen(uid);

	out[0] = '\0';
	if (!d || !ulen)
		goto done;
	while ((e = readdir(d))) {
		const char *name = e->d_name, *first = strchr(name, '_');
		size_t n = strlen(name);

		if (n < ulen + 4 || strcmp(name + n - ulen, uid) != 0 || name[n - ulen - 1] != '_' || !first ||
		    first == name || first >= name + n - ulen - 2 ||
		    memchr(first + 1, '_', (size_t)(name + n - ulen - 1 - first - 1)))
			continue;
		snprintf(out, size, "%.*s/%.*s", (int)(first - name), name, (int)(name + n - ulen - 1 - first - 1),
			 first + 1);
		break;
	}
done:
	if (d)
		closedir(d);
	return out;
}

/* A DNS label, as Kubernetes names a container: [a-z0-9] and '-' inside, 63 at most. */
static bool dns_label(const char *s, size_t n)
{
	if (!n || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-')
			return false;
	return true;
}

const char *k8s_container_of_id(const char *containers_dir, const char *id, char *out, size_t size)
{
	DIR *d;
	struct dirent *e;
	char tail[80];

	out[0] = '\0';
	if (strlen(id) != 64 || !(d = opendir(containers_dir)))
		return out;
	snprintf(tail, sizeof(tail), "-%s.log", id); /* "-ID.log": the end of the entry */
	while ((e = readdir(d))) {
		const char *name = e->d_name, *last = strrchr(name, '_');
		size_t n = strlen(name), tn = strlen(tail), underscores = 0;

		if (n <= tn || strcmp(name + n - tn, tail) != 0)
			continue;
		for (const char *c = name; *c; c++)
			underscores += *c == '_';
		/* POD_NAMESPACE_CONTAINER-ID.log: the name is between the second '_' and "-ID.log" */
		if (underscores != 2 || name[0] == '_' || last[-1] == '_' ||
		    !dns_label(last + 1, (size_t)(name + n - tn - last - 1)))
			continue;
		snprintf(out, size, "%.*s", (int)(name + n - tn - last - 1), last + 1);
		break;
	}
	closedir(d);
	return out;
}

int proc_cgroup_path(pid_t pid, char *out, size_t size)
{
	char path[64], line[4096];
	FILE *f;
	int ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* v2 is the "0::" line; v1 controllers have their own lines. */
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, size, "%s", line + 3);
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

uint32_t proc_ns_pid(pid_t pid)
{
	char path[64], line[512];
	uint32_t ns_pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "NSpid:", 6)) {
			/* One pid per nested namespace, outermost first: the last is the container's. */
			char *save = NULL;

			for (char *t = strtok_r(line + 6, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save))
				ns_pid = (uint32_t)strtoul(t, NULL, 10);
			break;
		}
	}
	fclose(f);
	return ns_pid;
}
