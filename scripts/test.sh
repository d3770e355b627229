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
