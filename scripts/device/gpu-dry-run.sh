#!/usr/bin/env bash
# gpu-check.sh on a machine without a GPU: the real scripts, laid out as the
# kit lays them, with every GPU program (the test programs, quire-cli,
# compute-sanitizer, ncu, nvidia-smi) replaced by a stand-in that sleeps for
# as long as the earlier GPU runs took (DURATIONS below) and writes
# plausible output. It runs in real time against the real deadline, then
# prints every program started: its command line, its budget (timeout's
# limit) and when it started and ended against the deadline. It exits 1 on a
# mistake of the scripts: a variable unset, a path missing, a program the
# kit does not carry, a program given no budget, or one cut off by it.
#   gpu-dry-run.sh OUTPUT_FOLDER [SECONDS] [STEPS]   (gpu-check.sh --dry-run)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: gpu-dry-run.sh OUTPUT_FOLDER [SECONDS] [STEPS]}
seconds=${2:-480}
steps=("${@:3}")

# Seconds each program took on the GPU machine (or the estimate where no
# run timed it): the first row whose glob matches "PROGRAM ARGUMENTS" wins
# (QUIRE_TEST_CLASSES=... before it when set). Sources:
# bench/notes/cuda-decode.md and bench/results/2026-11-26-h100-cuda*.md.
DURATIONS='
nvidia-smi*                                              |   0 | instant
test_kernels_cuda_loader*                                |   3 | estimate
QUIRE_TEST_CLASSES=CudaLinearTest test_kernels_cuda_ops* |  20 | estimate: the linear suite alone
test_kernels_cuda_ops*                                   |  45 | estimate: the whole op suite
test_engine_cuda*                                        |  60 | estimate: every family and format, twice as long as the op suite
*compute-sanitizer --tool memcheck*                      |  45 | estimate: one class under memcheck
*CudaSamplingTest*compute-sanitizer --tool racecheck*    | 150 | over 90 s on the H200, inside 240 on the H100
*compute-sanitizer --tool racecheck*                     | 120 | ran out of 120 s on the H100 (KV)
ncu*                                                     |  35 | estimate: 1600 kernels one at a time, budget 60
quire-cli make-model*exl2*                               |  60 | estimate: 32 layers quantized on 16 cores
quire-cli make-model*exl3*                               |  90 | estimate
quire-cli make-model*gptq*                               |  60 | estimate
quire-cli make-model*fp8*                                |  40 | estimate
quire-cli make-model*                                    |  35 | estimate: FP16, 14 GB written
quire-cli bench*fp16*--cache*                            |  45 | "tens of seconds" a 32-layer pair (H100), FP16 weights
quire-cli bench*                                         |  35 | "tens of seconds" a 32-layer pair (H100)
*                                                        |   1 | anything else
'

dry=$(mktemp -d /tmp/quire-dry-run.XXXXXX)
kit=$dry/device-kit
mkdir -p "$kit/bin" "$kit/lib/quire" "$out"
# The kit's files as scripts/device-kit.sh copies them: from the repository
# (scripts/device, bench/) or from an unpacked kit (all beside this script).
repo=$(cd "$here/../.." 2>/dev/null && pwd)
if [[ -f "$repo/scripts/device-kit.sh" ]]; then
  cp "$repo"/scripts/device/*.sh "$repo"/scripts/device/*.py "$repo/bench/transformers_decode.py" \
    "$repo/bench/first_layers.py" "$repo/bench/ncu_summary.py" "$kit/" || exit 2
else
  cp "$here"/*.sh "$here"/*.py "$kit/" || exit 2
fi
: >"$kit/lib/quire/libquire_cuda.so"
# The programs the kit carries: an unpacked kit's own list, else
# device-kit.sh's rule (the CLI, the op and loader suites, and every
# program of ctest's label gpu) over the first build folder found.
programs=()
if [[ -d "$here/bin" ]]; then
  for program in "$here"/bin/*; do programs+=("$(basename "$program")"); done
  echo "kit programs from $here/bin"
else
  programs=(quire-cli test_kernels_cuda_ops test_kernels_cuda_loader)
  for build in "$repo/build/release" "$repo/build/test" /work/main/build/release; do
    [[ -f "$build/CTestTestfile.cmake" ]] || continue
    while read -r name; do programs+=("$name"); done < <(cd "$build" && ctest -N -L gpu 2>/dev/null |
      sed -n 's/^ *Test *#[0-9]*: //p')
    echo "kit programs: device-kit.sh's rule over $build"
    break
  done
fi
echo "${programs[*]}"
printf '%s\n' "$DURATIONS" >"$dry/durations"
export QUIRE_DRY_LOG=$dry/programs.log QUIRE_DRY_DURATIONS=$dry/durations
cat >"$dry/standin" <<'STANDIN'
#!/usr/bin/env bash
# A GPU program's stand-in: logs its start, budget and end, sleeps its time.
program=$(basename "$0")
line="$program $*"
[[ -n "${QUIRE_TEST_CLASSES:-}" ]] && line="QUIRE_TEST_CLASSES=$QUIRE_TEST_CLASSES $line"
seconds=1
while IFS='|' read -r pattern time _; do
  pattern=$(sed 's/^ *//; s/ *$//' <<<"$pattern")
  [[ -z "$pattern" ]] && continue
  # shellcheck disable=SC2053 # the table's patterns are globs
  if [[ "$line" == $pattern ]]; then seconds=$(( time )); break; fi
done <"$QUIRE_DRY_DURATIONS"
budget=-
parent=$(tr '\0' ' ' </proc/$PPID/cmdline 2>/dev/null)
[[ $parent == timeout* ]] && budget=$(awk '{print $2}' <<<"$parent")
echo "start $(date +%s) $budget $seconds ${QUIRE_CUDA_LINEAR:--} $line" >>"$QUIRE_DRY_LOG"
cut() {
  trap - TERM
  echo "cut $(date +%s) $line" >>"$QUIRE_DRY_LOG"
  kill "$sleeper" 2>/dev/null
  exit 124
}
trap cut TERM
sleep "$seconds" & sleeper=$!
wait "$sleeper"
variant=${QUIRE_CUDA_LINEAR:-fp32}
gain=1.0; [[ $variant != fp32 ]] && gain=1.3
case "$program $1" in
  "quire-cli make-model") mkdir -p "$2" && echo '{}' >"$2/config.json" ;;
  "quire-cli bench")
    echo "bench: decode at 512 context: 150 tokens/s" >&2
    python3 - "$gain" <<'JSON'
import json, sys
g = float(sys.argv[1])
print(json.dumps({
    "prefill": [{"tokens": 2048, "tokens_per_s": 5000 * g, "fraction_of_matmul_rate": 0.13 * g}],
    "first_token": [{"tokens": 4000, "seconds": 0.9 / g}],
    "decode": [{"context": c, "tokens_per_s": r * g, "fraction_of_bandwidth_bound": f * g}
               for c, r, f in [(512, 158, 0.19), (4096, 140, 0.18), (32768, 81, 0.13)]],
    "batch": [{"jobs": j, "tokens_per_s": r * g, "decode_tokens_per_s": r * g}
              for j, r in [(1, 150), (4, 440), (16, 750)]]}))
JSON
    ;;
  "ncu"*) echo '"ID","Kernel Name","Metric Name","Metric Value"'
          echo '"0","embedding_kernel","gpu__time_duration.sum","9500"' ;;
  "compute-sanitizer"*) echo "========= ERROR SUMMARY: 0 errors" ;;
  "nvidia-smi"*) echo "NVIDIA stand-in, Driver Version: none, 0MiB" ;;
  test_*) echo "Totals: 1 passed, 0 failed, 0 skipped" ;;
esac
echo "end $(date +%s) $line" >>"$QUIRE_DRY_LOG"
STANDIN
chmod +x "$dry/standin"
for program in "${programs[@]}" nvidia-smi compute-sanitizer ncu; do
  cp "$dry/standin" "$kit/bin/$program"
done

start=$(date +%s)
deadline=$(( start + seconds ))
echo "dry run of gpu-check.sh in $dry, $seconds s from $(date -u +%T) (deadline $(date -u -d @$deadline +%T))"
QUIRE_KIT_WORK=$dry/work QUIRE_KIT_MODELS=$dry/models \
  "$kit/gpu-check.sh" "$out" "$seconds" "${steps[@]}" >"$dry/gpu-check.out" 2>"$dry/gpu-check.err"
status=$?
cat "$dry/gpu-check.out"
python3 - "$dry" "$start" "$deadline" "$status" <<'REPORT' | tee "$out/dry-run.txt"
import re, sys
dry, start, deadline, status = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
runs, mistakes = [], []
for line in open(f"{dry}/programs.log"):
    kind, when, rest = (line.rstrip("\n").split(" ", 2) + ["", ""])[:3]
    if not when.isdigit():
        continue
    when = int(when) - start
    if kind == "start":
        budget, planned, variant, command = rest.split(" ", 3)
        runs.append({"command": command.strip(), "start": when, "budget": budget,
                     "planned": int(planned), "variant": variant, "end": None, "cut": False})
    else:
        for run in reversed(runs):
            if run["command"] == rest.strip() and run["end"] is None:
                run["end"], run["cut"] = when, kind == "cut"
                break
print(f"\n{'start':>6} {'end':>6} {'budget':>6} {'needs':>5} {'variant':>7}  command "
      f"(seconds from the start; D = {dry})")
for run in runs:
    end = "-" if run["end"] is None else str(run["end"])
    note = ""
    if run["cut"]:
        note = "  CUT at its budget"
        mistakes.append(f"cut off after {run['end'] - run['start']} s of {run['planned']}: "
                        f"{run['command'][:100]}")
    if run["budget"] == "1":
        note += "  NO BUDGET LEFT"
        mistakes.append(f"started with no time left: {run['command'][:100]}")
    if run["end"] is not None and start + run["end"] > deadline:
        note += "  AFTER THE DEADLINE"
    command = run["command"].replace(dry, "D")
    print(f"{run['start']:>6} {end:>6} {run['budget']:>6} {run['planned']:>5} {run['variant']:>7}  "
          f"{command[:100]}{note}")
errors = [l.strip() for l in open(f"{dry}/gpu-check.err")
          if re.search(r"unbound variable|No such file|command not found|syntax error|"
                       r"bad substitution|Permission denied", l)]
mistakes += [f"script error: {e}" for e in errors]
last = max([r["end"] or r["start"] for r in runs] + [0])
print(f"\nlast program ended at {last} s of {deadline - start} s; gpu-check.sh exit {status}")
for m in mistakes:
    print(f"MISTAKE: {m}")
print(f"{len(runs)} programs, {len(mistakes)} mistakes")
sys.exit(1 if mistakes else 0)
REPORT
