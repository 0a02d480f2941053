// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "system/container_names.h"

#include <stdio.h>
#include <string.h>

#include "system/cgroups.h"

int container_names__of(struct container_names *c, const char *id, uint64_t now, char *out, size_t size)
{
	const struct runtime_container *rc;
	bool fresh = false;

	if (*k8s_container_of_id(c->k8s_dir, id, out, size))
		return 1;
	rc = runtimes__find(&c->list, id);
	if (!rc && (!c->read_ns || now - c->read_ns >= CONTAINER_NAMES_REREAD_NS)) {
		runtimes__free(&c->list);
		runtimes__read(c->src, &c->list);
		c->read_ns = now ? now : 1;
		fresh = true;
		rc = runtimes__find(&c->list, id);
	}
	snprintf(out, size, "%s", rc ? rc->name : "");
	return rc || fresh;
}

void container_names__free(struct container_names *c)
{
	runtimes__free(&c->list);
	memset(c, 0, sizeof(*c));
}
