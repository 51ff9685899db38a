#!/usr/bin/env bash
# Builds Quire's Debian packages and the portable .tar.gz, installs the `quire`
# package with dpkg, uses the installed programs the way a user would (the
# command line on the bundled demo model, `quire --self-test` offscreen),
# installs it again over itself, removes and purges it, and checks that the
# user's chats and settings are still there. Needs root (or sudo) for dpkg.
#   scripts/package-test.sh [build folder]   default: build/package
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/package}

if [[ $(id -u) -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "package-test: installing a package needs root or sudo" >&2
  exit 1
fi

step() { echo "package-test: $*"; }
fail() {
  echo "package-test: FAILED: $*" >&2
  exit 1
}
passed=()
check() { passed+=("$*"); }

# A plain release build of what the packages hold (no tests, no sanitizers).
# -O2 as the tested builds use: GCC 12 reports false -Wrestrict warnings
# inside std::string at -O3. The CUDA backend is built when nvcc is there, as
# in a release, so its separate package is made too: compiled for one
# architecture (cmake/QuireCuda.cmake) it adds seconds, not minutes, to the
# build, so CI keeps it. Only `quire` is installed here: `quire-cuda` needs
# the NVIDIA driver.
step "building in $build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DQUIRE_SANITIZE=OFF -DQUIRE_BUILD_TESTS=OFF -DQUIRE_WARNINGS_AS_ERRORS=OFF -DCMAKE_UNITY_BUILD=ON >/dev/null
cmake --build "$build" --parallel "$(nproc)"
rm -f "$build"/*.deb "$build"/*.tar.gz
(cd "$build" && cpack -G DEB >/dev/null && cpack -G TGZ >/dev/null)

deb=$(find "$build" -maxdepth 1 -name 'quire_*.deb' | head -n 1)
[[ -n "$deb" ]] || fail "no quire_*.deb in $build"
tarball=$(find "$build" -maxdepth 1 -name 'quire-*.tar.gz' | head -n 1)
[[ -n "$tarball" ]] || fail "no portable .tar.gz in $build"
version=$(dpkg-deb --field "$deb" Version)
[[ -n "$version" ]] || fail "$(basename "$deb") has no version"
step "made $(basename "$deb") (version $version) and $(basename "$tarball")"
for cuda_deb in "$build"/quire-cuda_*.deb; do
  [[ -e "$cuda_deb" ]] && step "made $(basename "$cuda_deb") (optional CUDA backend)"
done
depends=$(dpkg-deb --field "$deb" Depends)
grep -q 'libqt6widgets6' <<<"$depends" || fail "the package does not depend on Qt"
# Listed once into a variable: `grep -q` ending a pipe early would kill the
# lister with SIGPIPE, which pipefail reports as a failure.
contents=$(dpkg-deb --contents "$deb")
for path in ./usr/bin/quire ./usr/bin/quire-cli ./usr/share/applications/app.quire.Quire.desktop \
  ./usr/share/metainfo/app.quire.Quire.metainfo.xml ./usr/share/icons/hicolor/scalable/apps/app.quire.Quire.svg \
  ./usr/share/quire/demo-model/model.safetensors; do
  grep -q " $path\$" <<<"$contents" || fail "$path is not in the package"
done
archive=$(tar -tzf "$tarball")
for path in bin/quire bin/quire-cli share/quire/demo-model/model.safetensors; do
  grep -q "/$path\$" <<<"$archive" || fail "the .tar.gz has no $path"
done
check "packages built: $(basename "$deb"), $(basename "$tarball"); Depends: $depends"

if dpkg-query -W -f='${Status}' quire 2>/dev/null | grep -q 'install ok installed'; then
  fail "a quire package is installed already; remove it first (dpkg -r quire)"
fi

# A user of our own: the checks must not touch the real one's files. Without
# QUIRE_DEMO_MODEL the programs look for the demo model where it is installed
# (or in this source tree, which the self-test's output rules out below).
# A run that fails after installing purges the package again, so the next
# run starts from a clean system.
home=$(mktemp -d)
installed_here=0
cleanup() {
  local status=$?
  if ((status != 0 && installed_here)); then
    step "purging the package this run installed"
    "${as_root[@]}" dpkg --purge quire >/dev/null || true
  fi
  rm -rf "$home"
  exit "$status"
}
trap cleanup EXIT
as_user=(env -u QUIRE_DEMO_MODEL HOME="$home" XDG_DATA_HOME="$home/.local/share"
  XDG_CONFIG_HOME="$home/.config" XDG_RUNTIME_DIR="$home/run" QT_QPA_PLATFORM=offscreen)
mkdir -m 700 "$home/run"

install_package() {
  installed_here=1
  if ! "${as_root[@]}" dpkg -i "$deb"; then
    step "dpkg left dependencies to install; asking apt"
    "${as_root[@]}" apt-get install -f -y -q
  fi
  local installed
  installed=$(dpkg-query -W -f='${Status} ${Version}' quire 2>/dev/null || true)
  [[ "$installed" == "install ok installed $version" ]] ||
    fail "dpkg reports quire as '$installed', not installed at version $version"
}

step "installing"
install_package
[[ -x /usr/bin/quire && -x /usr/bin/quire-cli ]] || fail "quire and quire-cli are not in /usr/bin"
check "installed with dpkg -i: quire $version"

step "the installed quire-cli on the installed demo model"
json=$("${as_user[@]}" /usr/bin/quire-cli generate /usr/share/quire/demo-model \
  --prompt "Hello" --max-new 8 --greedy --json)
echo "$json"
python3 - "$json" <<'EOF' || fail "quire-cli generate did not answer with tokens"
import json, sys
reply = json.loads(sys.argv[1])
assert reply["tokens"], "no tokens"
assert reply["prompt_tokens"] > 0
EOF
check "/usr/bin/quire-cli generate on /usr/share/quire/demo-model answered with tokens"

step "the installed quire --self-test, offscreen"
data="$home/.local/share/Quire/quire"
self_test=$("${as_user[@]}" /usr/bin/quire --self-test --data-dir "$data") ||
  fail "quire --self-test failed: $self_test"
echo "$self_test"
grep -q '^self-test: loaded /usr/share/quire/demo-model ' <<<"$self_test" ||
  fail "the self-test did not load the installed demo model (/usr/share/quire/demo-model)"
[[ -s "$data/chats.sqlite" ]] || fail "the self-test stored no chat in $data"
check "/usr/bin/quire --self-test (offscreen) replied from the installed demo model, stored $data/chats.sqlite"
mkdir -p "$home/.config/Quire"
printf '[ui]\nshow_memory_panel=true\n' >"$home/.config/Quire/quire.conf"
before=$(cd "$home" && find .local .config -type f -print0 | sort -z | xargs -0 sha256sum)

step "installing again over the installed package"
install_package
"${as_user[@]}" /usr/bin/quire-cli --help >/dev/null || fail "quire-cli broke after reinstalling"
check "dpkg -i over the installed package (upgrade in place)"

step "removing"
"${as_root[@]}" dpkg -r quire
[[ ! -e /usr/bin/quire && ! -e /usr/bin/quire-cli ]] || fail "the programs are still installed"
after=$(cd "$home" && find .local .config -type f -print0 | sort -z | xargs -0 sha256sum)
[[ "$before" == "$after" ]] || fail "removing the package changed the user's files"
installed_here=0
check "dpkg -r: programs gone, the user's chats and settings untouched"

step "installing and purging"
install_package
"${as_root[@]}" dpkg --purge quire
installed_here=0
status=$(dpkg-query -W -f='${Status}' quire 2>/dev/null || true)
[[ -z "$status" || "$status" == *not-installed ]] || fail "dpkg reports quire as '$status' after --purge"
[[ ! -e /usr/share/quire ]] || fail "/usr/share/quire is still there after --purge"
after=$(cd "$home" && find .local .config -type f -print0 | sort -z | xargs -0 sha256sum)
[[ "$before" == "$after" ]] || fail "purging the package changed the user's files"
check "dpkg --purge: package gone, the user's chats and settings untouched"

echo
echo "package-test: passed (quire $version)"
for line in "${passed[@]}"; do
  echo "  ok  $line"
done
