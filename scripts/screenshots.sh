#!/usr/bin/env bash
# Starts Quire under Xvfb with the demo model, holds a two-turn chat and saves
# the main window, the memory panel, the settings with their plan and the chat
# with its last reply regenerated (its "‹ 2/2 ›" switcher) and the Get models
# window (a fake Hub's repository, priced and downloading), a long chat
# resumed after a restart from the disk cache (its pages restored), and Gemma 3
# asked about a picture, into
# docs/screenshots/ (the pictures the README and docs/ show).
#   scripts/screenshots.sh [build folder]   default: build/release
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}

scripts/setup-debian.sh
if ! command -v xvfb-run >/dev/null; then
  echo "screenshots: xvfb-run is missing; install the xvfb and xauth packages" >&2
  exit 1
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" --target test_quire_app test_quire_app_tools
# A real X server (not Qt's offscreen platform), a desktop-sized screen.
shoot() {
  QT_QPA_PLATFORM=xcb QUIRE_SCREENSHOT_DIR="$PWD/docs/screenshots" QUIRE_TEST_CLASSES="$2" \
    xvfb-run -a -s "-screen 0 1600x1000x24" "$build/tests/app/gui/$1"
}
shoot test_quire_app ScreenshotTest,ModelHubAppTest,DiskCacheAppTest,ChatImagesAppTest
shoot test_quire_app_tools ToolCallsAppTest
ls -l docs/screenshots/quire-*.png
