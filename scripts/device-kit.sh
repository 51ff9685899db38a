#!/usr/bin/env bash
# Packs what a GPU machine without Qt or Debian's -dev packages needs to run
# Quire's GPU tests and benchmarks: the release build's quire-cli, the CUDA
# backend library and the GPU test programs, stripped, with the shared
# libraries they load that are not the C library (Qt, ICU, SentencePiece,
# libb2, ...), and the scripts in scripts/device/. Writes
# build/device-kit.tar.xz (a few tens of MiB); on the GPU machine:
#   tar -xJf build/device-kit.tar.xz -C /tmp
#   /tmp/device-kit/gpu-check.sh "$OUT" [SECONDS]  # all of the below within a deadline
#   /tmp/device-kit/gpu-tests.sh DIR               # every gpu-label test program
#   /tmp/device-kit/gpu-sanitize.sh DIR            # compute-sanitizer over the op suite
#   /tmp/device-kit/gpu-bench.sh DIR [models]      # make the 8B-shaped models, bench them
# Each writes logs and results under the folder it is given.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build/release
kit=build/device-kit
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# Only what the kit carries: the CLI, the backend and the GPU test programs.
# (Tests that rerun another program with other settings are no targets.)
targets=$(ninja -C "$build" -t targets all | sed -n 's/^\([^:/]*\): .*/\1/p')
gpu_tests=$(cd "$build" && ctest -N -L gpu | sed -n 's/^ *Test *#[0-9]*: //p' |
            grep -Fxf <(echo "$targets") || true)
# shellcheck disable=SC2086 # one target per word
cmake --build "$build" --parallel "$(nproc)" --target quire-cli quire_cuda \
  test_kernels_cuda_loader $gpu_tests

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
# Where an installed Quire keeps it (lib/quire beside bin), so the loader
# finds it without QUIRE_CUDA_LIBRARY, as its test expects.
mkdir -p "$kit/lib/quire"
cp "$build/kernels/cuda/libquire_cuda.so" "$kit/lib/quire/"
strip --strip-debug "$kit"/bin/* "$kit/lib/quire/libquire_cuda.so"

# The shared libraries they load, except the C library's own (the GPU
# machine's is newer, and it must match its dynamic loader).
for file in "$kit"/bin/* "$kit/lib/quire/libquire_cuda.so"; do
  ldd "$file" | awk '/=> \// {print $3}'
done | sort -u | while read -r library; do
  case "$(basename "$library")" in
    libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux*) ;;
    *) cp -L "$library" "$kit/lib/" ;;
  esac
done

# The scripts that run there (scripts/device/), and the transformers
# reference the benchmark is compared with.
cp scripts/device/*.sh scripts/device/*.py bench/transformers_decode.py bench/first_layers.py \
  bench/ncu_summary.py "$kit/"
chmod +x "$kit"/*.sh

tar -cJf build/device-kit.tar.xz -C build device-kit
du -h build/device-kit.tar.xz
