/*
 * What each kernel of the matrix takes (user/kernel_plan.c), from what it
 * was probed to offer: the build of the BPF programs, the --mode wall path,
 * and the one line a kernel that cannot do a mode gives.
 */
#include "unit.h"

#include "kernel_plan.h"

/* Debian's cloud kernels, as pyebpf's probes find them. */
static const struct kernel_features k510 = { .btf = true, .ringbuf = true, .switch_done = true };
static const struct kernel_features k61 = { .btf = true,
					    .ringbuf = true,
					    .bpf_loop = true,
					    .task_btf = true,
					    .task_pt_regs = true,
					    .task_storage = true,
					    .switch_done = true };
static const struct kernel_features k612 = { .btf = true,
					     .ringbuf = true,
					     .bpf_loop = true,
					     .task_btf = true,
					     .task_pt_regs = true,
					     .task_storage = true,
					     .task_from_pid = true,
					     .switch_done = true };
static const struct kernel_features k618 = { .btf = true,
					     .ringbuf = true,
					     .bpf_loop = true,
					     .task_btf = true,
					     .task_pt_regs = true,
					     .task_storage = true,
					     .task_from_pid = true,
					     .task_work = TASK_WORK_IMPL };
static const struct kernel_features k72 = { .btf = true,
					    .ringbuf = true,
					    .bpf_loop = true,
					    .task_btf = true,
					    .task_pt_regs = true,
					    .task_storage = true,
					    .task_from_pid = true,
					    .task_work = TASK_WORK_V2,
					    .switch_done = true };

Test(kernel_plan, cpu_mode_starts_on_every_kernel)
{
	const struct kernel_features *all[] = { &k510, &k61, &k612, &k618, &k72 };
	const enum bpf_build want[] = { BPF_BUILD_COMPAT, BPF_BUILD_DEFAULT, BPF_BUILD_DEFAULT, BPF_BUILD_DEFAULT,
					BPF_BUILD_TW2 };
	struct kernel_plan p;
	char why[256] = "";

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		cr_assert_eq(kernel_plan(all[i], false, false, &p, why, sizeof(why)), 0, "kernel %zu: %s", i, why);
		cr_assert_eq(p.build, want[i], "kernel %zu: build %s", i, bpf_build_name(p.build));
		cr_assert_eq(p.wall, WALL_NONE);
	}
}

Test(kernel_plan, wall_mode_takes_the_best_path_each_kernel_has)
{
	struct kernel_plan p;
	char why[256] = "";
	const char *notes[3];

	cr_assert_eq(kernel_plan(&k618, true, false, &p, why, sizeof(why)), 0);
	cr_assert_eq(p.wall, WALL_TASK_WORK);
	cr_assert(p.flush);
	cr_assert_eq(kernel_plan_notes(&p, true, notes), 0, "6.18 has everything: nothing to say");

	cr_assert_eq(kernel_plan(&k72, true, false, &p, why, sizeof(why)), 0);
	cr_assert_eq(p.wall, WALL_TASK_WORK);
	cr_assert_eq(p.build, BPF_BUILD_TW2);

	cr_assert_eq(kernel_plan(&k612, true, false, &p, why, sizeof(why)), 0);
	cr_assert_eq(p.wall, WALL_KPROBE);
	cr_assert(p.flush);
	cr_assert_eq(kernel_plan_notes(&p, true, notes), 1);
	cr_assert_str_eq(notes[0], "off-CPU samples are sent from a kprobe on finish_task_switch (no "
				   "bpf_task_work_schedule_resume before Linux 6.18)");

	cr_assert_eq(kernel_plan(&k61, true, false, &p, why, sizeof(why)), 0);
	cr_assert_eq(p.wall, WALL_KPROBE);
	cr_assert_not(p.flush);
	cr_assert_eq(kernel_plan_notes(&p, true, notes), 2);
	cr_assert(strstr(notes[1], "no bpf_task_from_pid before Linux 6.2"));
}

Test(kernel_plan, what_a_kernel_cannot_do_is_one_line)
{
	struct kernel_plan p;
	char why[256];
	const char *notes[3];
	struct kernel_features no_kprobe = k612, no_btf = k612;

	cr_assert_eq(kernel_plan(&k510, true, false, &p, why, sizeof(why)), -1);
	cr_assert_str_eq(why, "--mode wall/off-cpu needs BPF task storage and bpf_loop (Linux 5.17); this kernel can "
			      "do --mode cpu");
	cr_assert_eq(kernel_plan(&k510, false, true, &p, why, sizeof(why)), -1);
	cr_assert_str_eq(why, "--native needs the BPF helper bpf_task_pt_regs (Linux 5.15); this kernel can do "
			      "--mode cpu without --native");
	cr_assert_eq(kernel_plan(&k510, false, false, &p, why, sizeof(why)), 0);
	cr_assert_eq(kernel_plan_notes(&p, false, notes), 1);
	cr_assert(strstr(notes[0], "no bpf_loop (Linux 5.17)"));

	no_kprobe.switch_done = false;
	cr_assert_eq(kernel_plan(&no_kprobe, true, false, &p, why, sizeof(why)), -1);
	cr_assert(strstr(why, "or a kprobe on finish_task_switch; this kernel can do --mode cpu"));
	no_btf.btf = false;
	cr_assert_eq(kernel_plan(&no_btf, false, false, &p, why, sizeof(why)), -1);
	cr_assert_str_eq(why, "this kernel has no BTF (/sys/kernel/btf/vmlinux): pyebpf needs CONFIG_DEBUG_INFO_BTF=y");
}
