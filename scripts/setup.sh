#!/usr/bin/env bash
# Set up iclr26nb: a virtual environment in .venv (unless one is active), CPU torch first, then the package
# with its dev extras, and the `python3` Jupyter kernel that papermill uses. Safe to run again.
# GPU users: export TORCH_INDEX_URL to the PyTorch wheel index of your CUDA version before running this.
# `--dev` also installs nbdev's git hooks, so saving a notebook in JupyterLab keeps it clean (nbdev_clean on save).
set -euo pipefail
DEV=0; for a in "$@"; do [ "$a" = "--dev" ] && DEV=1; done
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ -z "${VIRTUAL_ENV:-}" ]; then
  [ -x .venv/bin/python ] || "$PY" -m venv .venv
  # shellcheck disable=SC1091
  . .venv/bin/activate
fi
echo "[setup] python: $(python -c 'import sys; print(sys.executable, sys.version.split()[0])')"
python -m pip install -q ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} "torch==2.13.0"
python -m pip install -q -c constraints.txt -e ".[dev]"
python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (iclr26nb)" >/dev/null
if [ "$DEV" = 1 ]; then nbdev_install_hooks && echo "[setup] nbdev git hooks installed (notebooks are cleaned on save)"; fi
echo "[setup] done: $(python -c 'import torch, iclr26nb; print("iclr26nb", iclr26nb.__version__, "| torch", torch.__version__)')"
