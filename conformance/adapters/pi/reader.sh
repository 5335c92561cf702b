#!/bin/sh
# pi VERSION itself as a reader, whatever pi a case follows: `sh reader.sh VERSION OP [ARGS…]`
# runs conformance/reference/adapter.mjs (pi's own SessionManager) with `--pi VERSION` after
# the runner's arguments (the last --pi wins). VERSION: 0.73, 0.87 or 1.5.
v=$1
shift
exec node "$(dirname "$0")/../../reference/adapter.mjs" "$@" --pi "$v"
