# Sourced by the kit's scripts: its libraries first, then CUDA's (cuBLAS is
# opened at run time: the toolkit's, or the one PyTorch's wheels carry).
kit=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cublas_wheel=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null || true)
export LD_LIBRARY_PATH="$kit/lib:/usr/local/cuda/lib64:${cublas_wheel:+$cublas_wheel:}${LD_LIBRARY_PATH:-}"
export QUIRE_CUDA_LIBRARY="$kit/lib/quire/libquire_cuda.so"
export QT_QPA_PLATFORM=offscreen
export PATH="$kit/bin:/usr/local/cuda/bin:$PATH"
# Nsight Compute may live outside the toolkit's bin folder.
for ncu_dir in /opt/nvidia/nsight-compute/*/; do
  [[ -x "$ncu_dir/ncu" ]] && ! command -v ncu >/dev/null && export PATH="$PATH:$ncu_dir"
done

# The CUDA backend's kernel variants for the linear products
# (QUIRE_CUDA_LINEAR), each run side by side by the tests, the benchmark
# and the profile; the first is the default, which runs everything else.
# A new variant is one more word here.
export QUIRE_KIT_VARIANTS=${QUIRE_KIT_VARIANTS:-fp32 dp4a half2x4}
read -ra kit_variants <<<"$QUIRE_KIT_VARIANTS"
default_variant=${kit_variants[0]}
# Dense weights (FP16, FP8) take the same kernel in every variant but fp32
# (evict-first streaming), so their pairs compare the first two variants;
# so do the profiles, whose runs are long (the default against the first
# alternative, the one the kit is run to judge).
first_variants=("${kit_variants[@]:0:2}")
# variants_for FORMAT_OR_MODEL_NAME [profile]: the variants worth running.
variants_for() {
  case $1 in
    *fp16* | *fp8* | *bf16*) echo "${first_variants[*]}" ;;
    *) [[ ${2:-} == profile ]] && echo "${first_variants[*]}" || echo "${kit_variants[*]}" ;;
  esac
}

# Seconds left before the deadline the caller set (QUIRE_DEADLINE, seconds
# since the epoch), capped at $1: each step of a run stops in time for the
# next ones and for its logs to come back.
step_budget() {
  local cap=$1 left=$(( ${QUIRE_DEADLINE:-$(( $(date +%s) + 100000 ))} - $(date +%s) ))
  (( left < cap )) && cap=$left
  (( cap < 1 )) && cap=1
  echo "$cap"
}
