#!/usr/bin/env bash
# Run make stages in turn, every one even when one fails, and end with one
# counted line: each Criterion test (unit, integration, in every kernel's
# guest), each fuzz target and each kernel guest counts once.
#   bash tests/stages.sh STAGE...        (make targets: unit-test fuzz ...)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
log=$(mktemp)
trap 'rm -f "$log" "$log".*' EXIT
failed_stages=()
# What later stages download or build the first time (minutes on a fresh
# machine, mostly waiting on the network), beside the CPU-light stages
# before the integration tests: the backends from the Go module proxy, the
# dist tests' bare roots (trixie's is the container tests' image too) and
# the kernel matrix's kernels and arm64 root. All of it is done before the
# integration tests start, which measure shares of the CPU. A prefetch that
# fails says so; the stage that needs it tries again and fails on its own.
prefetch_pids=() prefetch_names=()
prefetch() { # NAME CMD...
	local name=$1
	shift
	"$@" >"$log.$name" 2>&1 &
	prefetch_pids+=($!)
	prefetch_names+=("$name")
	echo "stages: $name, beside the stages before the integration tests"
}
prefetch_wait() {
	local i start=$SECONDS
	for i in "${!prefetch_pids[@]}"; do
		if ! wait "${prefetch_pids[$i]}"; then
			tail -n 20 "$log.${prefetch_names[$i]}"
			echo "stages: ${prefetch_names[$i]} failed (its stage tries again)"
		fi
		rm -f "$log.${prefetch_names[$i]}"
	done
	[ ${#prefetch_pids[@]} -eq 0 ] || echo "stages: waited $((SECONDS - start)) s for the prefetches"
	prefetch_pids=() prefetch_names=()
}
case " $* " in *" integ-test "* | *" integ-check "* | *" dist-test "*)
	prefetch backends make --no-print-directory backends
	;;
esac
case " $* " in *" integ-test "* | *" dist-test "*)
	prefetch roots bash tests/dist/roots.sh build trixie bullseye
	;;
esac
# Go 1.24+ builds go tool pprof on its first use (45 s here with an empty
# build cache; the first integration test that reads a recording with it,
# archive's, took 87 s on a fresh machine): built now, cached for them.
case " $* " in *" integ-test "* | *" integ-check "*)
	if command -v go >/dev/null; then prefetch go-pprof go tool pprof -h; fi
	;;
esac
# One job: both may install QEMU with apt, which one dpkg at a time can.
kernels=()
case " $* " in *" kernel-test "*) kernels+=("bash .ci/kernels/fetch.sh") ;; esac
case " $* " in *" kernel-test-arm64 "*)
	kernels+=("env KERNEL_ARCH=arm64 KERNEL_SUITES='${ARM64_SUITES:-bookworm trixie}' bash .ci/kernels/fetch.sh")
	;;
esac
if [ ${#kernels[@]} -gt 0 ]; then
	cmd=$(printf '%s && ' "${kernels[@]}")
	prefetch kernels bash -c "${cmd% && }"
fi
for stage in "$@"; do
	case $stage in integ-test | integ-check | dist-test | kernel-test | kernel-test-arm64) prefetch_wait ;; esac
	echo "== make $stage"
	start=$SECONDS
	if ! make --no-print-directory "$stage" 2>&1 | tee -a "$log"; then
		failed_stages+=("$stage")
	fi
	# Each stage's share of CI's time budget, for the one who must cut it.
	echo "== make $stage: $((SECONDS - start)) s"
done
prefetch_wait
# Criterion: "[====] Synthesis: Tested: N | Passing: P | Failing: F | Crashing: C".
read -r passed failed < <(sed -n 's/.*Synthesis: Tested: [0-9]* | Passing: \([0-9]*\) | Failing: \([0-9]*\) | Crashing: \([0-9]*\).*/\1 \2 \3/p' "$log" |
	awk '{p += $1; f += $2 + $3} END {print p + 0, f + 0}')
# libFuzzer: a target that ran to its time is "Done N runs"; one that found something printed "fuzz: NAME failed".
fuzz_ok=$(grep -c '^Done [0-9]* runs' "$log")
fuzz_bad=$(grep -c '^fuzz: .* failed' "$log")
# The kernel matrix: "kernel NAME RELEASE exit N" per guest.
kern_ok=$(grep -cE '^kernel [a-z]+ .* exit 0$' "$log")
kern_bad=$(grep -cE '^kernel [a-z]+ .* exit [1-9][0-9]*$' "$log")
# The docs' check: "docs: N passed, N failed".
read -r doc_ok doc_bad < <(sed -n 's/^docs: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log" |
	awk '{p += $1; f += $2} END {print p + 0, f + 0}')
# The dist stage: "dist: N passed, N failed".
read -r dist_ok dist_bad < <(sed -n 's/^dist: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log" |
	awk '{p += $1; f += $2} END {print p + 0, f + 0}')
passed=$((passed + fuzz_ok + kern_ok + doc_ok + dist_ok))
failed=$((failed + fuzz_bad + kern_bad + doc_bad + dist_bad))
# A stage that failed before any test could count (a build error) counts as one failure.
if [ ${#failed_stages[@]} -gt 0 ] && [ "$failed" = 0 ]; then
	failed=${#failed_stages[@]}
fi
# Each failed Criterion test with the assertion that failed it, at the end,
# where a CI log cut to its head and tail still shows them: the failure
# reads "[----] file:line: Assertion Failed", its message lines, "[FAIL] name".
awk '/^\[----\] [^ ]*:[0-9]+: Assertion Failed/ {n = 0; keep = 1}
	keep && /^\[----\]/ && n < 8 {buf[n++] = $0}
	/^\[FAIL\] / {for (i = 0; i < n; i++) print "failed: " buf[i]; print "failed: " $0; n = 0; keep = 0}' "$log" | head -n 60
grep -aE '^guest-tests: .* (FAILED|TIMED OUT)|^fuzz: .* failed|^dist: FAIL ' "$log" | sed 's/^/failed: /' | head -n 20
[ ${#failed_stages[@]} -eq 0 ] || echo "stages that failed: ${failed_stages[*]}"
echo "tests: $passed passed, $failed failed"
[ ${#failed_stages[@]} -eq 0 ] && [ "$failed" = 0 ]
