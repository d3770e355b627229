#!/usr/bin/env bash
# Start a Celery worker (embedded filesystem broker by default) and the web server.
set -euo pipefail
host=${1:-127.0.0.1}
port=${2:-8000}
bin=.venv/bin
mkdir -p var
# One worker for both queues (default and "watch"), with beat embedded (-B) for the
# periodic resyncs, figure recomputation and the housekeeping that restarts watches.
"$bin/celery" -A webapp worker -B --loglevel=INFO --concurrency=3 --logfile=var/celery-worker.log &
worker=$!
trap 'kill "$worker" 2>/dev/null || true' EXIT INT TERM
echo
echo "Topolens is running: open http://$host:$port/"
echo "Admin: http://$host:$port/admin/ (user admin, password in var/admin_password)"
echo "Celery worker log: var/celery-worker.log. Stop with Ctrl-C."
echo
# DEBUG stays off (set DEBUG=true to debug): unknown URLs get a plain 404, and WhiteNoise
# serves the collected static files compressed and cacheable.
DEBUG=${DEBUG:-false} "$bin/python" manage.py runserver "$host:$port"
