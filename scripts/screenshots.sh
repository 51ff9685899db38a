#!/usr/bin/env bash
# Starts Quire under Xvfb with the demo model, holds a two-turn chat and saves
# the main window, the memory panel, the settings with their plan and the chat
# with its last reply regenerated (its "‹ 2/2 ›" switcher) and the Get models
# window (a fake Hub's repository, priced and downloading), and a long chat
# resumed after a restart from the disk cache (its pages restored), into
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
cmake --build "$build" --target test_quire_app
# A real X server (not Qt's offscreen platform), a desktop-sized screen.
QT_QPA_PLATFORM=xcb QUIRE_SCREENSHOT_DIR="$PWD/docs/screenshots" \
  QUIRE_TEST_CLASSES=ScreenshotTest,ModelHubAppTest,ToolCallsAppTest,DiskCacheAppTest \
  xvfb-run -a -s "-screen 0 1600x1000x24" "$build/tests/app/gui/test_quire_app"
ls -l docs/screenshots/quire-*.png
