#!/usr/bin/env bash
# Runs before `npm test`: makes sure what the tests use for real is there.
# - Chromium (headless browser test of the signing page): installed from Debian's packages when missing.
# - docker-compose (test/docker.test.ts reads compose.yaml through it: schema, interpolation, profiles):
#   Debian's package, installed when missing. No Docker daemon is needed, it only runs `config`.
# - PostgreSQL and Redis on 127.0.0.1 (storage and shared-cache tests): started when installed but down.
set -uo pipefail

have() { command -v "$1" >/dev/null 2>&1; }

if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && have apt-get; then
    echo "test-prereqs: installing Chromium (Debian package) for the browser test"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/tmp/test-prereqs-apt.log 2>&1 ||
      { echo "test-prereqs: Chromium install failed, see /tmp/test-prereqs-apt.log" >&2; exit 1; }
  else
    echo "test-prereqs: /usr/bin/chromium is missing; install Debian's 'chromium' package (the browser test needs it)" >&2
    exit 1
  fi
fi

if ! have docker-compose || ! have python3 || ! python3 -c 'import yaml' 2>/dev/null; then
  if [ "$(id -u)" = 0 ] && have apt-get; then
    echo "test-prereqs: installing docker-compose (Debian package) for the compose.yaml test"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-compose python3-yaml; } >/tmp/test-prereqs-apt.log 2>&1 ||
      { echo "test-prereqs: docker-compose install failed, see /tmp/test-prereqs-apt.log" >&2; exit 1; }
  else
    echo "test-prereqs: docker-compose is missing; install Debian's 'docker-compose' package (the compose.yaml test needs it)" >&2
    exit 1
  fi
fi

pg_up() { have pg_isready && pg_isready -h 127.0.0.1 -p 5432 -q; }
redis_up() { have redis-cli && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; }

if ! pg_up && have pg_ctlcluster; then
  echo "test-prereqs: starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start >/dev/null 2>&1 || true
fi
if ! redis_up && have redis-server; then
  echo "test-prereqs: starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log >/dev/null 2>&1 || true
fi
for _ in $(seq 1 30); do
  pg_up && redis_up && exit 0
  sleep 1
done
echo "test-prereqs: PostgreSQL (127.0.0.1:5432, database test) and Redis (127.0.0.1:6379) must be running" >&2
exit 1
