#!/usr/bin/env bash
# Starts the services the fleet tests need (PostgreSQL on 127.0.0.1:5432, Redis on
# 127.0.0.1:6379) when they are not running, with the machine's own start commands. The
# single-node daemon needs neither; only CI's test run (and a developer's) does.
set -uo pipefail

if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  echo "ensure-services: starting PostgreSQL" >&2
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start || true
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "ensure-services: starting Redis" >&2
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
fi

# Wait (up to 30 s) for both to answer; say which one did not.
for _ in $(seq 1 60); do
  pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && exit 0
  sleep 0.5
done
pg_isready -h 127.0.0.1 -p 5432 || echo "ensure-services: PostgreSQL is not answering on 127.0.0.1:5432" >&2
redis-cli -h 127.0.0.1 -p 6379 ping || echo "ensure-services: Redis is not answering on 127.0.0.1:6379" >&2
exit 1
