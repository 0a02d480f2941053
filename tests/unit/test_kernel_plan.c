/*
 * What each kernel of the matrix takes (user/record/kernel_plan.c), from what it
 * was probed to offer: the build of the BPF programs, the --mode wall path,
 * and the one line a kernel that cannot do a mode gives.
 */
#include "unit.h"

#include "record/kernel_plan.h"

/* A kernel of the matrix (major * 100 + minor) as pyebpf's probes find it:
 * each feature from the release that brought it; this machine's 6.18 has no
 * kprobes, Debian's cloud kernels have. */
static struct kernel_features kernel(int v)
{
	return (struct kernel_features){
		.btf = true,
		.ringbuf = true,
		.task_btf = v >= 511,
		.task_storage = v >= 511,
		.task_pt_regs = v >= 515,
		.bpf_loop = v >= 517,
		.task_from_pid = v >= 602,
		.task_work = v >= 700   ? TASK_WORK_V2
			     : v >= 618 ? TASK_WORK_IMPL
					: TASK_WORK_NONE,
		.switch_done = v != 618,
	};
}

Test(kernel_plan, cpu_mode_starts_on_every_kernel)
{
	const int all[] = { 510, 601, 612, 618, 702 };
	const enum bpf_build want[] = { BPF_BUILD_COMPAT, BPF_BUILD_DEFAULT, BPF_BUILD_DEFAULT, BPF_BUILD_DEFAULT,
					BPF_BUILD_TW2 };
	struct kernel_plan p;
	char why[256] = "";

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct kernel_features k = kernel(all[i]);

		cr_assert_eq(kernel_plan(&k, false, false, &p, why, sizeof(why)), 0, "kernel %d: %s", all[i], why);
		cr_assert_eq(p.build, want[i], "kernel %d: build %s", all[i], bpf_build_name(p.build));
		cr_assert_eq(p.wall, WALL_NONE);
	}
}

Test(kernel_plan, wall_mode_takes_the_best_path_each_kernel_has)
{
	struct kernel_plan p;
	char why[256] = "";
	const char *notes[3];
	struct kernel_features k618 = kernel(618), k72 = kernel(702), k612 = kernel(612), k61 = kernel(601),
			       k510 = kernel(510);

	cr_assert_eq(kernel_plan(&k618, true, false, &p, why, sizeof(why)), 0);
	cr_assert_eq(p.wall, WALL_TASK_WORK);
	cr_assert(p.flush);
	cr_assert_eq(kernel_plan_notes(&p, true, notes), 0, "6.18 has everything: nothing to say");

	/* 6.18.44 (this machine): the verifier refuses the task work, and there
	 * is no kprobe: sys_exit, and the line says why. */
	k618.task_work_refused = true;
	cr_assert_eq(kernel_plan(&k618, true, false, &p, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(p.wall, WALL_SYS_EXIT);
	cr_assert_eq(p.build, BPF_BUILD_DEFAULT);
	cr_assert(p.flush);
	cr_assert_eq(kernel_plan_notes(&p, true, notes), 1);
	cr_assert(strstr(notes[0], "this kernel's verifier refuses bpf_task_work_schedule_resume's callback"), "%s",
		  notes[0]);
	/* With a kprobe, the kprobe; a 7.x kernel keeps its build. */
	k618.switch_done = true;
	cr_assert_eq(kernel_plan(&k618, true, false, &p, why, sizeof(why)), 0);
	cr_assert_eq(p.wall, WALL_KPROBE);
	cr_assert_eq(kernel_plan_notes(&p, true, notes), 1);
	cr_assert(strstr(notes[0], "a kprobe on finish_task_switch (this kernel's verifier refuses"), "%s", notes[0]);
	k72.task_work_refused = true;
	cr_assert_eq(kernel_plan(&k72, true, false, &p, why, sizeof(why)), 0);
	cr_assert_eq(p.build, BPF_BUILD_TW2);
	cr_assert_eq(p.wall, WALL_KPROBE);
	k72.task_work_refused = false;

	cr_assert_eq(kernel_plan(&k72, true, false, &p, why, sizeof(why)), 0);
	cr_assert_eq(p.wall, WALL_TASK_WORK);
	cr_assert_eq(p.build, BPF_BUILD_TW2);

	cr_assert_eq(kernel_plan(&k612, true, false, &p, why, sizeof(why)), 0);
	cr_assert_eq(p.wall, WALL_KPROBE);
	cr_assert(p.flush);
	cr_assert_eq(kernel_plan_notes(&p, true, notes), 1);
	cr_assert_str_eq(notes[0], "off-CPU samples are sent from a kprobe on finish_task_switch (no "
				   "bpf_task_work_schedule_resume before Linux 6.18)");

	/* 5.10: the compat build, its switch times kept by tid, the kprobe path. */
	cr_assert_eq(kernel_plan(&k510, true, false, &p, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(p.build, BPF_BUILD_COMPAT);
	cr_assert_eq(p.wall, WALL_KPROBE);
	cr_assert_not(p.flush);
	cr_assert_eq(kernel_plan_notes(&p, true, notes), 3);

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
	struct kernel_features k510 = kernel(510), no_kprobe = kernel(612), no_btf = kernel(612);

	k510.switch_done = false; /* kprobes not built in: no wall path at all */
	cr_assert_eq(kernel_plan(&k510, true, false, &p, why, sizeof(why)), -1);
	cr_assert_str_eq(why, "--mode wall/off-cpu needs the kernel function bpf_task_work_schedule_resume (Linux "
			      "6.18) or a kprobe on finish_task_switch; this kernel can do --mode cpu");
	cr_assert_eq(kernel_plan(&k510, false, true, &p, why, sizeof(why)), -1);
	cr_assert_str_eq(why, "--native needs the BPF helper bpf_task_pt_regs (Linux 5.15); this kernel can do "
			      "--mode cpu without --native");
	cr_assert_eq(kernel_plan(&k510, false, false, &p, why, sizeof(why)), 0);
	cr_assert_eq(kernel_plan_notes(&p, false, notes), 1);
	cr_assert(strstr(notes[0], "no bpf_loop (Linux 5.17)"));

	/* 6.12 without kprobes: sent at sys_exit, said so. */
	no_kprobe.switch_done = false;
	cr_assert_eq(kernel_plan(&no_kprobe, true, false, &p, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(p.wall, WALL_SYS_EXIT);
	cr_assert_eq(kernel_plan_notes(&p, true, notes), 1);
	cr_assert(strstr(notes[0], "sent as the thread's syscall returns (no bpf_task_work_schedule_resume before "
				   "Linux 6.18, and no kprobes)"),
		  "%s", notes[0]);
	no_btf.btf = false;
	cr_assert_eq(kernel_plan(&no_btf, false, false, &p, why, sizeof(why)), -1);
	cr_assert_str_eq(why, "this kernel has no BTF (/sys/kernel/btf/vmlinux): pyebpf needs CONFIG_DEBUG_INFO_BTF=y");
}
