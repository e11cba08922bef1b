#!/bin/bash
# Case 4: account A validates its 5 MB UBL (three at once, then six in a row) while B validates a 6.7 KB example.
set -u
URL=${URL:-http://localhost:8080}; WORK=${WORK:-/tmp/pressroom-free-work}
v() { curl -s -o "$WORK/out-$1.json" -w "$1: HTTP %{http_code} in %{time_total} s\n" -H "x-api-key: $2" -H 'content-type: application/json' --data-binary "@$WORK/$3" "$URL/v1/einvoice/validate"; }
echo "B alone:"; v b0 "$KEY_B" b-small.json; v b0 "$KEY_B" b-small.json
for i in 1 2 3; do v "a$i" "$KEY_A" a-big.json & done
sleep 2
v b1 "$KEY_B" b-small.json
curl -s -o /dev/null -w "healthz: %{time_total} s\n" "$URL/healthz"
v b2 "$KEY_B" b-small.json
wait
echo "A six times in a row, B every 2 s meanwhile:"
( for i in 1 2 3 4 5 6; do v "a$i" "$KEY_A" a-big.json; done ) &
a=$!
: > "$WORK/b-times.txt"
while kill -0 $a 2>/dev/null; do curl -s -o /dev/null -w "%{http_code} %{time_total}\n" -H "x-api-key: $KEY_B" -H 'content-type: application/json' --data-binary "@$WORK/b-small.json" "$URL/v1/einvoice/validate" >> "$WORK/b-times.txt"; sleep 2; done
sort -k2 -n "$WORK/b-times.txt" | awk '{n++; c[$1]++; max=$2} END {print "B: " n " validations, " (c["200"]+0) " answered 200; slowest " max " s"}'
