#!/usr/bin/env bash
# Drives the desktop program as a new user would, under Xvfb with a real window
# manager, by keyboard and mouse (xdotool), and saves a screenshot after each
# step for people to look at:
#   1. a first chat with the demo model, then New chat from the message box;
#   2. back to the first chat by clicking it in the list;
#   3. a folder that is not a model typed into Settings, Enter pressed;
#   4. a 20,000-word paste sent as one message;
#   5. the chat exported as Markdown through the save dialog.
# Usage: scripts/walkthrough.sh [build folder] [output folder]
#   defaults: build/release and <build folder>/walkthrough
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
out=${2:-$build/walkthrough}

scripts/setup-debian.sh
# The walkthrough's own tools: a window manager (dialogs and focus behave as on
# a desktop), input synthesis, the clipboard and a screen grabber.
tools=(xvfb xauth openbox xdotool xclip imagemagick)
missing=()
for package in "${tools[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done
if ((${#missing[@]})); then
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" --target quire
program=$PWD/$build/app/gui/quire

rm -rf "$out"
mkdir -p "$out"
data=$(mktemp -d)
export_file=$(mktemp -d)/exported.md

# A free display number, then the server, the window manager and the program.
display=90
while [[ -e /tmp/.X11-unix/X$display || -e /tmp/.X$display-lock ]]; do ((display++)); done
export DISPLAY=:$display
Xvfb "$DISPLAY" -screen 0 1440x900x24 -nolisten tcp >"$out/xvfb.log" 2>&1 &
xvfb=$!
cleanup() {
  kill "${app:-}" "${wm:-}" "$xvfb" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT
for _ in $(seq 50); do xdotool getdisplaygeometry >/dev/null 2>&1 && break; sleep 0.2; done
openbox >"$out/openbox.log" 2>&1 &
wm=$!

QT_QPA_PLATFORM=xcb "$program" --demo --data-dir "$data" >"$out/quire.log" 2>&1 &
app=$!

step=0
shot() {
  ((++step))
  local file
  file=$(printf '%s/%02d-%s.png' "$out" "$step" "$1")
  import -window root "$file"
  echo "walkthrough: $file"
}
# Waits until the focused window's title matches a pattern.
wait_title() {
  for _ in $(seq 150); do
    if xdotool getactivewindow getwindowname 2>/dev/null | grep -q -- "$1"; then return 0; fi
    sleep 0.2
  done
  echo "walkthrough: no window titled '$1' appeared" >&2
  xdotool getactivewindow getwindowname >&2 || true
  shot "timeout"
  exit 1
}
# Waits until the program's log says a reply has finished (the engine reports
# each one) or the given seconds pass: replies of the demo model take a moment.
settle() { sleep "${1:-3}"; }

# The main window (Qt also maps a 3x3 leader window with the same name).
window=$(xdotool search --sync --onlyvisible --name "— Quire" | head -1)
xdotool windowsize "$window" 1280 800
xdotool windowmove "$window" 40 40
xdotool windowactivate --sync "$window"
sleep 1
wait_title "Demo model"
settle 2

# 1. A first chat, then a new one started from the message box.
xdotool type --delay 15 "Hello!"
xdotool key Return
settle 4
xdotool key ctrl+n
settle 1
xdotool type --delay 15 "Tell me a fortune."
xdotool key Return
settle 4
shot "second-chat"

# 2. Back to the first chat: the list's second row (newest first).
read -r wx wy wh < <(xdotool getwindowgeometry --shell "$window" |
  awk -F= '/^X=|^Y=|^HEIGHT=/{printf "%s ", $2} END{print ""}')
xdotool mousemove $((wx + 120)) $((wy + 122)) click 1
settle 1
shot "back-to-first-chat"

# 3. Settings with a folder that is not a model; Enter must not apply it.
xdotool key ctrl+comma
wait_title "settings"
xdotool key ctrl+a
xdotool type --delay 15 "/tmp"
settle 2
shot "settings-bad-folder"
xdotool key Return
settle 2
shot "settings-after-enter"
xdotool key Escape
settle 1
xdotool windowactivate --sync "$window"
shot "model-still-loaded"

# 4. A 20,000-word paste.
python3 -c 'import itertools; print(" ".join(itertools.islice(itertools.cycle(["lorem", "ipsum", "dolor", "sit", "amet"]), 20000)))' |
  xclip -selection clipboard
# Into the message box (bottom of the conversation column), then paste.
xdotool mousemove $((wx + 400)) $((wy + wh - 93)) click 1
xdotool key ctrl+v
settle 1
xdotool key Return
settle 3
shot "long-paste"

# 5. Export the chat as Markdown through the File menu and the save dialog.
xdotool key alt+f
settle 1
xdotool key m
wait_title "Export"
settle 1
shot "export-dialog"
xdotool key ctrl+a
xdotool type --delay 10 "$export_file"
xdotool key Return
settle 2
shot "exported"
if [[ -s $export_file ]]; then
  echo "walkthrough: exported $(wc -c <"$export_file") bytes"
else
  echo "walkthrough: the export did not write $export_file" >&2
  exit 1
fi

xdotool key ctrl+q
wait "$app" || true
echo "walkthrough: $step screenshots in $out"
