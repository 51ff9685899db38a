#!/usr/bin/env bash
# Packs what a GPU machine without Qt or Debian's -dev packages needs to run
# Quire's GPU tests and benchmarks: the release build's quire-cli, the CUDA
# backend library and the GPU test programs, stripped, with the shared
# libraries they load that are not the C library (Qt, ICU, SentencePiece,
# libb2, ...), and two scripts to run there. Writes build/device-kit.tar.xz
# (a few tens of MiB); on the GPU machine:
#   tar -xJf build/device-kit.tar.xz -C /tmp
#   /tmp/device-kit/gpu-tests.sh "$OUT"            # every gpu-label test program
#   /tmp/device-kit/gpu-bench.sh "$OUT" [models]   # make the 8B-shaped models, bench them
# Both write logs and results under the folder they are given.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build/release
kit=build/device-kit
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --parallel "$(nproc)"

programs=(app/cli/quire-cli tests/kernels/cuda/test_kernels_cuda_ops
          tests/kernels/cuda/test_kernels_cuda_loader)
# Every GPU test program the build has (label gpu), whatever its folder.
while IFS= read -r program; do
  programs+=("$program")
done < <(cd "$build" && ctest -N -L gpu 2>/dev/null | sed -n 's/^ *Test *#[0-9]*: //p' |
         while read -r name; do find . -name "$name" -type f -perm -u+x | head -1; done |
         sed 's|^\./||')

rm -rf "$kit" && mkdir -p "$kit/bin" "$kit/lib"
declare -A seen=()
for program in "${programs[@]}"; do
  [[ -n "${seen[$program]:-}" ]] && continue
  seen[$program]=1
  cp "$build/$program" "$kit/bin/"
done
cp "$build/kernels/cuda/libquire_cuda.so" "$kit/lib/"
strip --strip-debug "$kit"/bin/* "$kit/lib/libquire_cuda.so"

# The shared libraries they load, except the C library's own (the GPU
# machine's is newer, and it must match its dynamic loader).
for file in "$kit"/bin/* "$kit/lib/libquire_cuda.so"; do
  ldd "$file" | awk '/=> \// {print $3}'
done | sort -u | while read -r library; do
  case "$(basename "$library")" in
    libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux*) ;;
    *) cp -L "$library" "$kit/lib/" ;;
  esac
done

cat >"$kit/env.sh" <<'EOF'
# Sourced by the kit's scripts: its libraries first, then CUDA's (cuBLAS).
kit=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH="$kit/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export QUIRE_CUDA_LIBRARY="$kit/lib/libquire_cuda.so"
export QT_QPA_PLATFORM=offscreen
export PATH="$kit/bin:$PATH"
EOF

cat >"$kit/gpu-tests.sh" <<'EOF'
#!/usr/bin/env bash
# Runs every test program of the kit, each with its log under $1.
set -uo pipefail
source "$(dirname "$0")/env.sh"
out=${1:?usage: gpu-tests.sh OUTPUT_FOLDER}
mkdir -p "$out"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
failed=0
for test in "$kit"/bin/test_*; do
  name=$(basename "$test")
  if "$test" >"$out/$name.log" 2>&1; then
    echo "PASS $name"
  else
    echo "FAIL $name (log: $name.log)"
    failed=1
    grep -E "^(FAIL|QFATAL)" "$out/$name.log" | head -20
  fi
done
exit "$failed"
EOF

cat >"$kit/gpu-bench.sh" <<'EOF'
#!/usr/bin/env bash
# Builds synthetic models with Llama-3-8B's layer shapes (random weights:
# speed only) in EXL2 4.0 bpw with a 6-bit head and in FP16, and benchmarks
# them on the GPU with FP16 and Q4 caches. JSON results and logs go under $1.
# The vocabulary is make-model's largest, 4096, not 128256: the head is 0.2%
# of the weights instead of 6.5%.
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=${1:?usage: gpu-bench.sh OUTPUT_FOLDER [MODEL_FOLDER]}
models=${2:-/tmp/quire-models}
mkdir -p "$out" "$models"
shape=(--arch llama --hidden 4096 --layers 32 --heads 32 --kv-heads 8 --intermediate 14336
       --vocab 4096 --max-position-embeddings 40960 --seed 1)
for format in exl2:4.0 fp16; do
  dir="$models/llama-8b-${format/:/-}"
  head=()
  [[ "$format" == exl2:* ]] && head=(--head-bits 6)
  [[ -f "$dir/config.json" ]] || quire-cli make-model "$dir" "${shape[@]}" --format "$format" "${head[@]}"
  for cache in q4 fp16; do
    name="$(basename "$dir")-$cache"
    quire-cli bench "$dir" --devices cuda --cache "$cache" --context 40960 \
      --prefill 2048 --decode-contexts 512,4096,32768 --decode-tokens 64 --repeat 3 \
      --batches 4,16,64 --json >"$out/$name.json" 2>"$out/$name.log"
    echo "bench: $name done"
  done
done
EOF
chmod +x "$kit"/*.sh

tar -cJf build/device-kit.tar.xz -C build device-kit
du -h build/device-kit.tar.xz
