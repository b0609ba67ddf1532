#!/usr/bin/env bash
# Quick start 2: set up, then run the test suite (every notebook in smoke mode under papermill, 2 workers,
# plus sync, structure, core, docs and CLI tests).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
[ -n "${VIRTUAL_ENV:-}" ] || . .venv/bin/activate
export THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 MPLBACKEND=Agg ICLR26NB_PROGRESS=0 HF_HUB_OFFLINE=1   # offline: nothing is fetched from the Hugging Face Hub
python -m pytest tests -n "${WORKERS:-2}" -p no:cacheprovider --durations=25 -ra "$@"
