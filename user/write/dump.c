// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "write/dump.h"

#include <inttypes.h>
#include <string.h>

#include "profile/offcpu.h"
#include "profile/profile.h"
#include "base/escape.h"

#define NAME_MAX_OUT 1024

/* A name from the target, escaped for the terminal. */
static const char *esc(const char *s, char *buf)
{
	return text_escape(s ? s : "", buf, NAME_MAX_OUT);
}

static const char *basename_of(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path ? path : "";
}

const char *dump_state(const struct dump_thread *t, char *buf, size_t size)
{
	const char *what;

	switch (t->reason) {
	case OFFCPU_NONE:
		what = "running";
		break;
	case OFFCPU_RUNQUEUE:
		what = "runnable";
		break;
	case OFFCPU_SLEEP:
		what = "sleeping";
		break;
	case OFFCPU_LOCK:
		what = "waiting: lock";
		break;
	case OFFCPU_GIL:
		what = "waiting: GIL";
		break;
	case OFFCPU_IO:
		what = "waiting: io";
		break;
	default:
		what = "waiting";
	}
	snprintf(buf, size, "%s%s", what, t->gil_known && t->gil_held ? ", holds the GIL" : "");
	return buf;
}

static void text_frame(FILE *out, const struct dump_frame *f)
{
	char a[NAME_MAX_OUT], b[NAME_MAX_OUT];

	switch (f->kind) {
	case FRAME_PYTHON:
		fprintf(out, "    File \"%s\", line %u, in %s\n", esc(f->file, a), f->line, esc(f->name, b));
		if (f->locals_changed)
			fputs("        (locals changed while read)\n", out);
		for (size_t i = 0; i < f->nlocals; i++)
			fprintf(out, "        %s = %s\n", esc(f->locals[i].name, a), esc(f->locals[i].value, b));
		break;
	case FRAME_NATIVE:
		if (f->name && f->name[0])
			fprintf(out, "    %s (%s)\n", esc(f->name, a), esc(basename_of(f->file), b));
		else if (f->file)
			fprintf(out, "    %s+0x%" PRIx64 "\n", esc(basename_of(f->file), a), f->offset);
		else
			fputs("    [unknown]\n", out);
		break;
	default:
		fprintf(out, "    %s\n", esc(f->name, a));
	}
}

/* "[task NAME]", an awaiter in a task's chain. */
static void awaited_by(FILE *out, const char *mark)
{
	char name[NAME_MAX_OUT], a[NAME_MAX_OUT];
	size_t n = strlen(mark) - 7; /* without "[task " and "]" */

	snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), mark + 6);
	fprintf(out, "  awaited by task \"%s\":\n", esc(name, a));
}

/* The pid inside the process's namespace, when it is another number than the host's. */
static bool ns_pid_differs(const struct dump_doc *d)
{
	return d->ns_pid && d->ns_pid != d->pid;
}

/* "Container 3f2a9c1b7d4e "web", pid 1 inside", or the pid in a namespace of no container. */
static void text_container(FILE *out, const struct dump_doc *d)
{
	char a[NAME_MAX_OUT];

	if (d->container && d->container[0]) {
		fprintf(out, "Container %s", esc(d->container, a));
		if (d->container_name && d->container_name[0])
			fprintf(out, " \"%s\"", esc(d->container_name, a));
		if (ns_pid_differs(d))
			fprintf(out, ", pid %u inside", d->ns_pid);
		fputc('\n', out);
	} else if (ns_pid_differs(d)) {
		fprintf(out, "Pid %u inside its pid namespace\n", d->ns_pid);
	}
}

void dump_write_text(FILE *out, const struct dump_doc *d)
{
	char a[NAME_MAX_OUT], st[64];

	fprintf(out, "Process %u \"%s\"", d->pid, esc(d->comm, a));
	if (d->python)
		fprintf(out, ", Python %s", esc(d->python, a));
	fprintf(out, ", %zu thread%s\n", d->nthreads, d->nthreads == 1 ? "" : "s");
	text_container(out, d);
	for (size_t i = 0; i < d->nthreads; i++) {
		const struct dump_thread *t = &d->threads[i];

		fprintf(out, "\nThread %u \"%s\" (%s)\n", t->tid, esc(t->name, a), dump_state(t, st, sizeof(st)));
		for (size_t j = 0; j < t->nframes; j++)
			text_frame(out, &t->frames[j]);
		if (t->nkframes)
			fputs("    Kernel:\n", out);
		for (size_t j = 0; j < t->nkframes; j++)
			fprintf(out, "        %s\n", esc(t->kframes[j].name, a));
	}
	if (d->ntasks)
		fputs("\nasyncio tasks pending (innermost coroutine first):\n", out);
	for (size_t i = 0; i < d->ntasks; i++) {
		const struct dump_task *t = &d->tasks[i];

		if (t->count > 1)
			fprintf(out, "\n%" PRIu64 " tasks", t->count);
		else
			fputs("\nTask", out);
		fprintf(out, " %s%s%s (", t->name[0] ? "\"" : "", t->name[0] ? esc(t->name, a) : "[unnamed]",
			t->name[0] ? "\"" : "");
		fprintf(out,
			strcmp(t->awaits, "running") != 0 && strcmp(t->awaits, "ready") != 0 ? "awaits %s)\n" : "%s)\n",
			t->awaits);
		for (size_t j = 0; j < t->nframes; j++) {
			const struct dump_frame *f = &t->frames[j];

			if (f->kind == FRAME_MARK && !strcmp(f->name, "[task]"))
				fputs("  awaited by an unnamed task:\n", out);
			else if (f->kind == FRAME_MARK && !strncmp(f->name, "[task ", 6) && strlen(f->name) > 7)
				awaited_by(out, f->name);
			else
				text_frame(out, f);
		}
	}
}

static void json_name(FILE *out, const char *s)
{
	char buf[NAME_MAX_OUT];

	json_str(out, esc(s, buf));
}

static void json_frame(FILE *out, const struct dump_frame *f)
{
	static const char *const kinds[] = { "native", "kernel", "python", "mark" };

	fprintf(out, "{\"kind\": \"%s\", \"function\": ", kinds[f->kind < 4 ? f->kind : 3]);
	json_name(out, f->name);
	if (f->file) {
		fputs(f->kind == FRAME_PYTHON ? ", \"file\": " : ", \"module\": ", out);
		json_name(out, f->file);
	}
	if (f->kind == FRAME_PYTHON)
		fprintf(out, ", \"line\": %u", f->line);
	else if (f->kind == FRAME_NATIVE && (!f->name || !f->name[0]))
		fprintf(out, ", \"offset\": %" PRIu64, f->offset);
	if (f->locals_changed)
		fputs(", \"locals\": \"changed while read\"", out);
	else if (f->nlocals) {
		fputs(", \"locals\": {", out);
		for (size_t i = 0; i < f->nlocals; i++) {
			fputs(i ? ", " : "", out);
			json_name(out, f->locals[i].name);
			fputs(": ", out);
			json_name(out, f->locals[i].value);
		}
		fputs("}", out);
	}
	fputs("}", out);
}

void dump_write_json(FILE *out, const struct dump_doc *d)
{
	fprintf(out, "{\"pid\": %u, \"comm\": ", d->pid);
	json_name(out, d->comm);
	fputs(", \"python\": ", out);
	if (d->python)
		json_name(out, d->python);
	else
		fputs("null", out);
	fputs(", \"container\": ", out);
	if (d->container && d->container[0])
		json_name(out, d->container);
	else
		fputs("null", out);
	if (d->container_name && d->container_name[0]) {
		fputs(", \"container_name\": ", out);
		json_name(out, d->container_name);
	}
	fputs(", \"ns_pid\": ", out);
	if (d->ns_pid)
		fprintf(out, "%u", d->ns_pid);
	else
		fputs("null", out);
	fputs(", \"threads\": [", out);
	for (size_t i = 0; i < d->nthreads; i++) {
		const struct dump_thread *t = &d->threads[i];
		const char *reason = offcpu_reason_name(t->reason);

		fprintf(out, "%s\n  {\"tid\": %u, \"name\": ", i ? "," : "", t->tid);
		json_name(out, t->name);
		fprintf(out, ", \"state\": \"%s\", \"reason\": ",
			t->reason == OFFCPU_NONE       ? "running"
			: t->reason == OFFCPU_RUNQUEUE ? "runnable"
						       : "waiting");
		if (reason[0])
			json_str(out, reason);
		else
			fputs("null", out);
		fprintf(out, ", \"gil\": %s", !t->gil_known ? "null" : t->gil_held ? "true" : "false");
		fputs(", \"frames\": [", out);
		for (size_t j = 0; j < t->nframes; j++) {
			fputs(j ? ",\n    " : "\n    ", out);
			json_frame(out, &t->frames[j]);
		}
		fputs("], \"kernel\": [", out);
		for (size_t j = 0; j < t->nkframes; j++) {
			fputs(j ? ", " : "", out);
			json_name(out, t->kframes[j].name);
		}
		fputs("]}", out);
	}
	fputs("\n], \"tasks\": [", out);
	for (size_t i = 0; i < d->ntasks; i++) {
		const struct dump_task *t = &d->tasks[i];

		fprintf(out, "%s\n  {\"name\": ", i ? "," : "");
		if (t->name[0])
			json_name(out, t->name);
		else
			fputs("null", out);
		fprintf(out, ", \"count\": %" PRIu64 ", \"awaits\": ", t->count);
		json_str(out, t->awaits);
		fputs(", \"frames\": [", out);
		for (size_t j = 0; j < t->nframes; j++) {
			fputs(j ? ",\n    " : "\n    ", out);
			json_frame(out, &t->frames[j]);
		}
		fputs("]}", out);
	}
	fputs("\n]}\n", out);
}
