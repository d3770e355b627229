#!/usr/bin/env bash
# The whole test suite: lint, migrations check, Django checks, pytest.
set -euo pipefail
bin=.venv/bin
"$bin/ruff" check .
"$bin/ruff" format --check .
"$bin/python" manage.py makemigrations --check --dry-run
"$bin/python" manage.py check
"$bin/mypy"
"$bin/pytest" "$@"
# The engine's cross-check switch (scheduler_api/engine/README.md): the demo's seed tests
# and the fast paths' agreement tests once more, every fast answer recomputed by the
# reference. Only for a whole run (no pytest arguments given).
if [ $# -eq 0 ]; then
  TOPOLENS_ENGINE_CROSSCHECK=1 "$bin/pytest" -q -p no:cacheprovider \
    tests/topology/test_demo_objects.py tests/engine/test_crosscheck.py \
    tests/engine/test_capacity_counts.py tests/engine/test_koordinator_vector.py \
    tests/engine/test_crane_vector.py
fi
