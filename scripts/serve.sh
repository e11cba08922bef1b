#!/usr/bin/env bash
# Sets up, then starts Pressroom on its embedded default: SQLite and local files under ./data, port 8080.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec node bin/pressroom.js serve "$@"
