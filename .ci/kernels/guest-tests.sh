#!/usr/bin/env bash
# What each guest of the kernel matrix runs (make kernel-test): the
# integration tests that depend on the kernel, from build/. PATH is the
# system's: pyenv's shims cost seconds per call under emulation.
set -uo pipefail
cd "$(dirname "$0")/../../build"
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# Under emulation a sample's BPF program takes many times longer than on
# hardware, and the kernel throttles perf events whose handlers are slow
# (it lowers perf_event_max_sample_rate until sampling all but stops): off
# in the guest, where only correctness is measured.
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent
rc=0
./integ-tests --jobs 1 --filter 'kernels/*' || rc=1
# 5.10 under QEMU samples -p and -- CMD targets at the full rate but -a (what
# --container uses) all but stops after the first second: not understood
# yet (README: Kernels); the container test runs from 5.17 on.
v=$(uname -r | awk -F. '{ print $1 * 100 + $2 }')
if [ "$v" -ge 517 ]; then
	./integ-tests --jobs 1 --filter 'containers/container_id_selects_one_of_two' || rc=1
fi
exit $rc
