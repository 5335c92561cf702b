#!/bin/sh
# pi VERSION itself as a writer, whatever profile a scenario is run with:
# `sh writer.sh VERSION --pi P OUT < script.ndjson` runs conformance/reference/pi-write.mjs
# (pi's own SessionManager) with `--pi VERSION` after the runner's arguments (the last --pi
# wins). VERSION: 0.73, 0.87 or 1.5.
v=$1
shift
exec node "$(dirname "$0")/../../reference/pi-write.mjs" "$@" --pi "$v"
