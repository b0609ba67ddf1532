#!/usr/bin/env bash
# Quick start 1: set up, then run every built series in smoke mode (executed notebooks in runs/smoke/),
# write the scoreboard, and build the docs site (Quarto if installed, else the fallback in _site/).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
[ -n "${VIRTUAL_ENV:-}" ] || . .venv/bin/activate
export THREADS=${THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MPLBACKEND=Agg
iclr26nb all "$@"
