#!/usr/bin/env bash
# Run the snippet checker on a private copy of the repository.
#
#   scripts/remote_check.sh [--refresh] CH...      e.g. scripts/remote_check.sh --refresh 02
#
# Copies the working tree (without .venv and _build) to $CHECK_HOST over ssh when it is set,
# otherwise to a local temporary directory, runs scripts/check_tutorial_snippets.py there, and
# with --refresh copies the rewritten chapters (book/*/NN-*.md) back. The remote host needs a
# Python with the book's dependencies: .venv/bin/python in the copy, or $CHECK_PYTHON.
# Messages name files in this repository, not in the copy (which is deleted on exit).
set -euo pipefail

usage() { echo "usage: $0 [--refresh] CH..." >&2; exit 2; }
refresh=()
if [[ "${1:-}" == "--refresh" ]]; then refresh=(--refresh); shift; fi
[[ $# -gt 0 ]] || usage

repo="$(cd "$(dirname "$0")/.." && pwd)"
python="${CHECK_PYTHON:-$repo/.venv/bin/python}"
# Point file:line messages from the copy back at this repository.
to_repo() { sed -u "s#$1/#$repo/#g"; }
excludes=(--exclude .venv --exclude _build --exclude .git --exclude __pycache__ --exclude .cache)

if [[ -n "${CHECK_HOST:-}" ]]; then
  workdir="$(ssh "$CHECK_HOST" mktemp -d -t agentrl-check.XXXXXX)"
  trap 'ssh "$CHECK_HOST" rm -rf "$workdir"' EXIT
  rsync -a "${excludes[@]}" "$repo/" "$CHECK_HOST:$workdir/"
  status=0
  ssh "$CHECK_HOST" "cd '$workdir' && ${CHECK_PYTHON:-python3} scripts/check_tutorial_snippets.py ${refresh[*]} --chapters $*" 2>&1 \
    | to_repo "$workdir" || status=$?
  [[ ${#refresh[@]} -gt 0 ]] && rsync -a --include '*/' --include '*.md' --exclude '*' "$CHECK_HOST:$workdir/book/" "$repo/book/"
else
  workdir="$(mktemp -d -t agentrl-check.XXXXXX)"
  trap 'rm -rf "$workdir"' EXIT
  (cd "$repo" && tar cf - "${excludes[@]}" .) | (cd "$workdir" && tar xf -)
  status=0
  (cd "$workdir" && "$python" scripts/check_tutorial_snippets.py "${refresh[@]}" --chapters "$@") 2>&1 \
    | to_repo "$workdir" || status=$?
  if [[ ${#refresh[@]} -gt 0 ]]; then
    for ch in "$@"; do
      for f in "$workdir"/book/*/"$ch"-*.md; do
        [[ -e "$f" ]] || continue
        rel="${f#"$workdir"/}"
        cmp -s "$f" "$repo/$rel" || { cp "$f" "$repo/$rel"; echo "updated $rel"; }
      done
    done
  fi
fi
exit "$status"
