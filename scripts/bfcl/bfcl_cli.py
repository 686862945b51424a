"""BFCL's own command line (`bfcl evaluate`, `bfcl scores`, ...) without the API-client SDKs.

bfcl-eval's CLI imports every model handler, and with them a dozen SDKs that evaluation never
calls; `bfcl_shim` stands in for those. The packages evaluation does use must be real:

  python -m venv bfcl && . bfcl/bin/activate
  pip install --no-deps bfcl-eval==2026.3.23
  pip install typer pandas numpy==1.26.4 tqdm overrides tabulate python-dotenv pydantic \
    filelock mpmath tenacity tree_sitter==0.21.3 tree-sitter-java==0.21.0 \
    tree-sitter-javascript==0.21.4 requests
  BFCL_PROJECT_ROOT=output/bench-... python scripts/bfcl/bfcl_cli.py evaluate \
    --model google/gemma-3-1b-it --test-category multi_turn --partial-eval
"""

import os
import sys
from pathlib import Path

# The shim would point BFCL at a temporary root; the caller's root is the run folder.
root = os.environ.get("BFCL_PROJECT_ROOT")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import bfcl_shim  # noqa: E402,F401  (must come before bfcl_eval)

if root is not None:
    os.environ["BFCL_PROJECT_ROOT"] = root

from bfcl_eval.__main__ import cli  # noqa: E402

if __name__ == "__main__":
    cli()
