# shellcheck shell=bash
# Sourced by the benchmark scripts (from the repository root):
#   base=$(results_base NAME)
# prints bench/results/<date>-NAME, the path of a results pair without its
# .json or .md; a second run on the same day keeps the first, with the time
# of day in the new name (bench/results/<date>-<HHMM>-NAME).
results_base() {
  local stamp base
  stamp=$(date -u +%Y-%m-%d)
  base="bench/results/${stamp}-$1"
  [[ -e "$base.json" ]] && base="bench/results/${stamp}-$(date -u +%H%M)-$1"
  echo "$base"
}
