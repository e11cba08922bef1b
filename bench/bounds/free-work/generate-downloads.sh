#!/bin/bash
# Case 11: `pressroom generate` (the built dist/, or CLI=another build's main.js) through lying-links.mjs (on port 8081).
set -u
CLI=${CLI:-dist/main.js}; WORK=${WORK:-/tmp/pressroom-free-work}
OUT=$(mktemp -d "$WORK/out-XXXX")
start=$(date +%s.%N)
timeout "${LIMIT:-400}" node "$CLI" generate --url http://127.0.0.1:8081 --key "$KEY_A" --template "$TEMPLATE" --data "$WORK/one.csv" --out "$OUT" > "$OUT.log" 2>&1; code=$?
echo "exit $code after $(echo "$(date +%s.%N) - $start" | bc | cut -c1-6) s; left in --out: $(ls -la "$OUT" | awk 'NR>3 {print $9, $5" B"}' | tr '\n' ' ')"
grep -E "delivered|download failed" "$OUT.log" | cut -c1-250
rm -rf "$OUT" "$OUT.log"
