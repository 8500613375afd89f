#!/bin/sh
# Runs the `sluice` command with the given arguments. When SLUICE_TOKEN_FILE names a file (a
# Docker or Kubernetes secret), its content becomes SLUICE_TOKEN, which `serve` and `status`
# read; the token then never appears in the image, the environment of `docker inspect` or `ps`.
set -eu
if [ -n "${SLUICE_TOKEN_FILE:-}" ]; then
  if [ ! -r "$SLUICE_TOKEN_FILE" ]; then
    echo "error: SLUICE_TOKEN_FILE \"$SLUICE_TOKEN_FILE\" is not a readable file" >&2
    exit 1
  fi
  SLUICE_TOKEN=$(cat "$SLUICE_TOKEN_FILE")
  export SLUICE_TOKEN
fi
exec "${SLUICE_BIN:-/opt/sluice/bin/sluice}" "$@"
