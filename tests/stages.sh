#!/usr/bin/env bash
# Run make stages in turn, every one even when one fails, and end with one
# counted line: each Criterion test (unit, integration, in every kernel's
# guest), each fuzz target and each kernel guest counts once.
#   bash tests/stages.sh STAGE...        (make targets: unit-test fuzz ...)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed_stages=()
# The integration tests' backends are built from the Go module proxy the
# first time (minutes): beside the stages before them, on the other core.
backends_pid=
case " $* " in *" integ-test "* | *" integ-check "*)
	make --no-print-directory backends >"$log.backends" 2>&1 &
	backends_pid=$!
	;;
esac
for stage in "$@"; do
	if [ -n "$backends_pid" ] && { [ "$stage" = integ-test ] || [ "$stage" = integ-check ]; }; then
		if ! wait "$backends_pid"; then
			cat "$log.backends"
			echo "stages: the test backends could not be built"
		fi
		backends_pid=
	fi
	echo "== make $stage"
	start=$SECONDS
	if ! make --no-print-directory "$stage" 2>&1 | tee -a "$log"; then
		failed_stages+=("$stage")
	fi
	# Each stage's share of CI's time budget, for the one who must cut it.
	echo "== make $stage: $((SECONDS - start)) s"
done
rm -f "$log.backends"
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
[ ${#failed_stages[@]} -eq 0 ] || echo "stages that failed: ${failed_stages[*]}"
echo "tests: $passed passed, $failed failed"
[ ${#failed_stages[@]} -eq 0 ] && [ "$failed" = 0 ]
