#!/usr/bin/env bash
# verify-kind.sh: the offline tests of hack/kind-up.sh's steps (hack/kind/test.sh). kind itself
# needs a Docker engine, which CI does not have.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec hack/kind/test.sh
