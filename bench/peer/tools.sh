#!/usr/bin/env bash
# Sets up the llama.cpp that bench/peer-llama-cpp.sh compares Quire with, in a
# cache folder outside the repository:
#   1. installs the npm packages pinned by bench/peer/package-lock.json:
#      @node-llama-cpp/linux-x64 has llama.cpp's prebuilt CPU libraries (one
#      libggml-cpu variant per x86 generation, the best loaded at run time),
#      node-llama-cpp the git bundle of the llama.cpp source they were built
#      from;
#   2. compiles llama-bench and llama-quantize from that source, and
#      bench/peer/llama_logits.cpp, against the prebuilt libraries (their
#      shared code is in the prebuilt libllama-common, so nothing else of
#      llama.cpp is compiled);
#   3. prints the versions the libraries report.
# The tools go into CACHE/bin beside links to the libraries: ggml looks for
# its CPU backends in the executable's folder.
#   bench/peer/tools.sh [CACHE]     (default ${XDG_CACHE_HOME:-~/.cache}/quire-peer)
# Prints the bin folder on stdout as its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/quire-peer}
npm_dir=$cache/npm
source_dir=$cache/llama.cpp
bin=$cache/bin
mkdir -p "$cache"

# 1. The packages, again whenever the lock file changes. Not `npm ci`:
# node-llama-cpp 3.22.1 names optional packages that were never published at
# that version (its macOS, Windows and riscv64 builds), so no lock file can
# list them and npm ci refuses every lock file as out of sync. `npm install`
# with the lock file installs what it pins; the lock file is compared
# afterwards, so a resolution that strays from it fails here. --omit=optional:
# the other optional packages are the CUDA and Vulkan builds (hundreds of
# MB); the CPU one is a direct dependency here.
if ! cmp -s "$here/package-lock.json" "$npm_dir/.installed-lock.json"; then
  echo "peer: installing the npm packages into $npm_dir" >&2
  rm -rf "$npm_dir" "$source_dir" "$bin"
  mkdir -p "$npm_dir"
  cp "$here/package.json" "$here/package-lock.json" "$npm_dir/"
  (cd "$npm_dir" && npm install --ignore-scripts --omit=optional --no-audit --no-fund >&2)
  cmp -s "$here/package-lock.json" "$npm_dir/package-lock.json" ||
    { echo "peer: npm resolved other versions than package-lock.json pins" >&2; exit 1; }
  cp "$here/package-lock.json" "$npm_dir/.installed-lock.json"
fi
prebuilt=$npm_dir/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
bundle=$npm_dir/node_modules/node-llama-cpp/llama/gitRelease.bundle
[[ -f "$prebuilt/libllama-common.so" ]] || { echo "peer: no libllama-common.so in $prebuilt" >&2; exit 1; }

# 2. The source, then the tools, again whenever a source of ours changes.
if [[ ! -f "$source_dir/include/llama.h" ]]; then
  [[ -f "$bundle" ]] || { echo "peer: no llama.cpp source bundle at $bundle" >&2; exit 1; }
  rm -rf "$source_dir"
  git -c advice.detachedHead=false clone --quiet "$bundle" "$source_dir"
fi
stamp=$(cat "$here/tools.sh" "$here/llama_logits.cpp" "$here/package-lock.json" | sha256sum | cut -c1-16)
if [[ ! -f "$bin/.built-$stamp" ]]; then
  echo "peer: compiling llama-bench, llama-quantize and llama-logits into $bin" >&2
  rm -rf "$bin"
  mkdir -p "$bin"
  # Links, not copies, so the tools load the very libraries of the package.
  for library in "$prebuilt"/*.so; do
    ln -s "$library" "$bin/"
  done
  includes=(-I "$source_dir/include" -I "$source_dir/ggml/include" -I "$source_dir/common"
            -I "$source_dir/vendor")
  # The linker, not the shell, expands $ORIGIN: the tools find the libraries
  # beside them wherever the cache is.
  # shellcheck disable=SC2016
  rpath='-Wl,-rpath,$ORIGIN'
  libraries=("$bin/libllama-common.so" "$bin"/libllama.v*.so "$bin"/libggml.v*.so
             "$bin/libggml-base.so" -pthread "$rpath")
  compile() {  # OUTPUT SOURCES...
    local output=$1
    shift
    g++ -std=c++17 -O2 -DNDEBUG "${includes[@]}" "$@" "${libraries[@]}" -o "$bin/$output"
  }
  compile llama-bench "$source_dir/tools/llama-bench/llama-bench.cpp" \
    "$source_dir/tools/llama-bench/main.cpp"
  compile llama-quantize "$source_dir/tools/quantize/quantize.cpp" \
    "$source_dir/tools/quantize/main.cpp"
  compile llama-logits "$here/llama_logits.cpp"
  touch "$bin/.built-$stamp"
fi

# 3. What the libraries say they are.
echo "peer: llama.cpp $("$bin/llama-logits" --version)" >&2
echo "$bin"
