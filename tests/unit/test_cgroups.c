/* cgroup v2 paths and container ids, on a directory tree shaped like cgroupfs (--container and --pod:
 * test_containers.c). */
#include "unit.h"

#include <sys/stat.h>

#include "system/cgroups.h"

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

Test(cgroups, container_ids_of_each_runtime)
{
	char id[128];

	cr_assert_str_eq(container_id_of("/system.slice/docker-" HEX64 ".scope", id, sizeof(id)), HEX64);
	cr_assert_str_eq(container_id_of("/kubepods.slice/kubepods-pod1.slice/cri-containerd-abc123.scope", id,
					 sizeof(id)),
			 "abc123");
	cr_assert_str_eq(container_id_of("/machine.slice/libpod-" HEX64 ".scope/container", id, sizeof(id)), HEX64);
	cr_assert_str_eq(container_id_of("/kubepods/burstable/pod9/" HEX64, id, sizeof(id)), HEX64);
	cr_assert_str_eq(container_id_of("/crio-deadbeef.scope", id, sizeof(id)), "deadbeef");
	cr_assert_str_eq(container_id_of("/user.slice/user-0.slice/session-3.scope", id, sizeof(id)), "");
	cr_assert_str_eq(container_id_of("/", id, sizeof(id)), "");
	cr_assert_str_eq(container_id_of("/docker-nothex.scope", id, sizeof(id)), "");
	cr_assert_str_eq(container_id_of("/system.slice/nerdctl-" HEX64 ".scope", id, sizeof(id)), HEX64);
	cr_assert_str_eq(container_id_of("/default/" HEX64, id, sizeof(id)), HEX64);
	cr_assert_str_eq(container_id_of("/docker", id, sizeof(id)), "", "the parent of docker's containers");
}

Test(cgroups, cgroup2_mount_beside_v1)
{
	const char *mounts = write_temp("cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n"
					"cgroup2 /sys/fs/cgroup/unified cgroup2 rw,nsdelegate 0 0\n");
	char m[256];

	cr_assert_eq(cgroup2_mount(mounts, m, sizeof(m)), 0);
	cr_assert_str_eq(m, "/sys/fs/cgroup/unified");
	unlink(mounts);
	mounts = write_temp("proc /proc proc rw 0 0\n");
	cr_assert_eq(cgroup2_mount(mounts, m, sizeof(m)), -1);
	unlink(mounts);
}

Test(cgroups, resolve_and_find)
{
	char root[] = "/tmp/pyebpf-cg-XXXXXX", dir[4096], why[512], path[4096];
	uint64_t id, want;
	struct stat st;

	cr_assert(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/system.slice", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/system.slice/docker-%s.scope", root, HEX64);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/system.slice/docker-%s.scope/init", root, HEX64);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/system.slice/docker-%s.scope", root, HEX64);
	cr_assert_eq(stat(path, &st), 0);
	want = st.st_ino;

	cr_assert_eq(cgroup_resolve(root, "/system.slice/docker-" HEX64 ".scope", dir, sizeof(dir), &id, why,
				    sizeof(why)),
		     0, "%s", why);
	cr_assert_str_eq(dir, path);
	cr_assert_eq(id, want);
	cr_assert_eq(cgroup_resolve(root, "system.slice/docker-" HEX64 ".scope/", dir, sizeof(dir), &id, why,
				    sizeof(why)),
		     0);
	cr_assert_eq(id, want);
	cr_assert_eq(cgroup_resolve(root, path, dir, sizeof(dir), &id, why, sizeof(why)), 0, "absolute");
	cr_assert_eq(id, want);
	cr_assert_eq(cgroup_resolve(root, "nope", dir, sizeof(dir), &id, why, sizeof(why)), -1);
	/* ".." is resolved: the same group by a detour, and nothing outside the mount. */
	cr_assert_eq(cgroup_resolve(root, "system.slice/../system.slice/docker-" HEX64 ".scope/init/..", dir,
				    sizeof(dir), &id, why, sizeof(why)),
		     0, "%s", why);
	cr_assert_eq(id, want);
	cr_assert_eq(cgroup_resolve(root, "../../../../etc", dir, sizeof(dir), &id, why, sizeof(why)), -1);
	cr_assert(strstr(why, "'../../../../etc' is outside the cgroup2 mount"), "%s", why);

	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	cr_assert_eq(system(cmd), 0);
}

Test(cgroups, own_process)
{
	char path[4096];

	cr_assert_eq(proc_cgroup_path(getpid(), path, sizeof(path)), 0);
	cr_assert_eq(path[0], '/', "%s", path);
	cr_assert_eq(proc_ns_pid(getpid()), (uint32_t)getpid(), "not in a pid namespace here");
}
