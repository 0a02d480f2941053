/*
 * The names samples carry for their containers: Kubernetes' from kubelet's
 * log links (POD_NAMESPACE_CONTAINER-ID.log), else the runtime's from its
 * state, read again for an unknown id at most once a second.
 */
#include "unit.h"
#include "fake_tree.h"

#include <unistd.h>

#include "system/cgroups.h"
#include "system/container_names.h"

#define HEX56 "0123456789abcdef0123456789abcdef0123456789abcdef01234567"
#define ID_WEB "aaaa1111" HEX56 /* docker "web" */
#define ID_NEW "aaaa2222" HEX56 /* docker "late", made after the first read */
#define ID_POD "cccc1111" HEX56 /* a pod's container "app" */
#define ID_ODD "dddd1111" HEX56 /* a link whose name breaks kubelet's pattern */

static char root[64];

static void build(void)
{
	strcpy(root, "/tmp/pyebpf-cnm-XXXXXX");
	cr_assert(mkdtemp(root));
	docker_config(root, "var/lib/docker", ID_WEB, ID_WEB, "web", true);
	mkdir_p(at(root, "var/log/containers"));
	/* kubelet's link points into /var/log/pods: only its name is read */
	cr_assert_eq(symlink("/nonexistent",
			     at(root, "var/log/containers/web-7d9f8b6c5-x2x9z_shop_app-%s.log", ID_POD)),
		     0);
	/* Four parts, an upper-case name, an empty pod: none is kubelet's. */
	put(at(root, "var/log/containers/a_b_c_x-%s.log", ID_ODD), "");
	put(at(root, "var/log/containers/p_ns_App-%s.log", ID_ODD), "");
	put(at(root, "var/log/containers/_ns_app-%s.log", ID_ODD), "");
}

static void cleanup(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(container_names, .init = build, .fini = cleanup);

Test(container_names, kubelets_log_links_name_a_pods_container)
{
	char out[64];
	const char *dir = at(root, "var/log/containers");

	cr_assert_str_eq(k8s_container_of_id(dir, ID_POD, out, sizeof(out)), "app");
	cr_assert_str_eq(k8s_container_of_id(dir, ID_ODD, out, sizeof(out)), "");
	cr_assert_str_eq(k8s_container_of_id(dir, ID_WEB, out, sizeof(out)), "");
	cr_assert_str_eq(k8s_container_of_id(dir, "cccc1111", out, sizeof(out)), "", "only a whole id");
	cr_assert_str_eq(k8s_container_of_id("/nonexistent", ID_POD, out, sizeof(out)), "");
}

Test(container_names, kubernetes_first_then_the_runtime_read_again_once_a_second)
{
	struct runtime_sources src = { .root = root, .proc = NULL };
	struct container_names c = { .src = &src, .k8s_dir = at(root, "var/log/containers") };
	const uint64_t s = 1000000000ULL;
	char out[64];

	cr_assert_eq(container_names__of(&c, ID_POD, s, out, sizeof(out)), 1);
	cr_assert_str_eq(out, "app");
	cr_assert_eq(c.read_ns, 0, "a pod's container needs no runtime's state");
	cr_assert_eq(container_names__of(&c, ID_WEB, s, out, sizeof(out)), 1);
	cr_assert_str_eq(out, "web");
	/* A container made after that read: not read again within the second, then found. */
	docker_config(root, "var/lib/docker", ID_NEW, ID_NEW, "late", true);
	cr_assert_eq(container_names__of(&c, ID_NEW, s + 500000000ULL, out, sizeof(out)), 0);
	cr_assert_str_eq(out, "");
	cr_assert_eq(container_names__of(&c, ID_NEW, s + 1000000000ULL, out, sizeof(out)), 1);
	cr_assert_str_eq(out, "late");
	/* An id no state knows, after a fresh read: final, unnamed. */
	cr_assert_eq(container_names__of(&c, ID_ODD, s + 3000000000ULL, out, sizeof(out)), 1);
	cr_assert_str_eq(out, "");
	container_names__free(&c);
}
