#!/usr/bin/env bash
# Everything one GPU session checks, in order, within a deadline: the test
# programs, compute-sanitizer, the benchmark. The models are made on the
# CPU in the background meanwhile. Logs go to a work folder, packed into
# $1/gpu-logs.tar.gz after each step, so a run stopped part way still
# returns what it did.
#   gpu-check.sh OUTPUT_FOLDER [SECONDS] [STEPS]
# steps: tests, sanitize (all runs) or sanitize=TOOL:CLASS+TOOL:CLASS...,
# bench (all pairs) or bench=PAIR+PAIR... (gpu-bench.sh), profile
set -uo pipefail
here=$(dirname "$0")
out=${1:?usage: gpu-check.sh OUTPUT_FOLDER [SECONDS] [STEPS]}
export QUIRE_DEADLINE=$(( $(date +%s) + ${2:-420} ))
steps=${3:-tests,sanitize,bench}
work=/tmp/gpu-check
mkdir -p "$out" "$work"
source "$here/env.sh"
pack() { tar -czf "$out/gpu-logs.tar.gz" -C "$work" . 2>/dev/null; }
{ uname -a; nvidia-smi; nvidia-smi -q -d CLOCK,POWER | head -40; nproc; free -g; } >"$work/machine.txt" 2>&1
head -12 "$work/machine.txt" | grep -E "NVIDIA|Driver|MiB"
ldd "$kit/lib/quire/libquire_cuda.so" "$kit"/bin/* | grep "not found" | sort -u
if [[ ,$steps, == *,bench* || ,$steps, == *,profile,* ]]; then
  nice -n 5 "$here/gpu-bench.sh" --make-only /tmp/quire-models >"$work/make-models.log" 2>&1 &
  export QUIRE_MODEL_MAKER=$!
fi
for step in ${steps//,/ }; do
  echo "== $step (at $SECONDS s)"
  arguments=()
  [[ $step == *=* ]] && IFS=+ read -ra arguments <<<"${step#*=}"
  case ${step%%=*} in
    tests) "$here/gpu-tests.sh" "$work/tests" ;;
    sanitize) "$here/gpu-sanitize.sh" "$work/sanitize" "${arguments[@]}" ;;
    bench) QUIRE_BENCH_PAIRS="${arguments[*]}" "$here/gpu-bench.sh" "$work/bench" /tmp/quire-models ;;
    profile) "$here/gpu-profile.sh" "$work/profile" /tmp/quire-models ;;
  esac
  pack
done
echo "== done at $SECONDS s"
pack
