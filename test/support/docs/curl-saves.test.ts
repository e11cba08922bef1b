import { describe, expect, it } from 'vitest';
import { curlsSavingWithoutFail } from './curl-saves.js';

describe('curlsSavingWithoutFail: a curl that saves a file must fail on an error answer', () => {
  it.each([
    ['curl -s -X POST localhost:8080/v1/pdf/create -d \'{"a":1}\' -o out.pdf', 1],
    ['curl -sSf -X POST localhost:8080/v1/pdf/create -d \'{"a":1}\' -o out.pdf', 0],
    ['curl -s --fail-with-body localhost:8080/x -o out.pdf', 0],
    ['curl -s localhost:8080/x --output out.pdf', 1],
    ['curl -s localhost:8080/x > out.pdf', 1],
    ["curl -sf -X DELETE localhost:8080/x -o /dev/null -w '%{http_code}\\n'", 0],
    ['curl -s -X DELETE localhost:8080/x -o /dev/null', 0],
    ['until curl -sf localhost:8080/readyz >/dev/null; do sleep 2; done', 0],
    ['curl -s "$(curl -s localhost:8080/b | jq -r .url)" -o march.zip', 1],
    ['curl -sSf "$(curl -s localhost:8080/b -o inner.json)" -o march.zip', 1],
    ['X=$(curl -s localhost:8080/a \\\n  -o a.pdf)', 1],
    ['# curl -s localhost:8080/x -o out.pdf', 0],
    ['curl -s localhost:8080/x -H "x-api-key: $API_KEY" | jq . > answer.json', 0],
  ])('%s → %i', (script, count) => {
    expect(curlsSavingWithoutFail(script)).toHaveLength(count);
  });
});
