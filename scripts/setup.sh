#!/usr/bin/env bash
# Idempotent set-up on Debian 12 + Node 20: system packages (Chromium, fonts, PDF tools), npm ci, build.
# Usage: bash scripts/setup.sh [--test]
# Nothing downloads a browser: Pressroom drives Debian's /usr/bin/chromium.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  chromium
  fonts-liberation2 fonts-dejavu-core fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji
  fonts-droid-fallback fonts-nanum  # Chinese, Japanese and Korean watermark text: TrueType files (Noto CJK is a collection)
  ghostscript qpdf poppler-utils
  util-linux  # prlimit: the child processes' memory and CPU ceilings (essential, so normally there already)
  curl jq openssl unzip  # what the docs' examples run (jq reads ids out of the answers)
)
# `--test` (scripts/test.sh): also what only the tests use — zbar reads the barcodes a document prints.
if [ "${1:-}" = "--test" ]; then APT_PACKAGES+=(zbar-tools); fi

SUDO=""
[ "$(id -u)" = "0" ] || SUDO="sudo"

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "[setup] apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null | head -1)" ]; then
    $SUDO apt-get update -qq
  fi
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

export PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
stamp=node_modules/.pressroom-lock-hash
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "[setup] npm ci"
  # --prefer-offline: packages already in npm's cache are not asked for again (measured: 607 packages
  # 3 min with a round trip each, on a warm cache); a fresh machine still downloads what it lacks.
  # --ignore-scripts, then the install scripts run below: better-sqlite3's prebuilt binaries are on
  # GitHub, which a closed machine does not reach, and then npm compiles SQLite (about 100 s on 2 cores).
  # The compiled addon is kept in ~/.cache/pressroom, keyed by its version, Node's ABI and the CPU, and
  # put back on the next clean install instead of being compiled again.
  npm ci --prefer-offline --no-audit --no-fund --loglevel=error --ignore-scripts
  scripted=$(node -e "const lock = require('./package-lock.json'); console.log(Object.entries(lock.packages).filter(([path, p]) => p.hasInstallScript && path !== 'node_modules/better-sqlite3').map(([path]) => path.replace(/^.*node_modules\//, '')).join(' '))")
  if [ -n "$scripted" ]; then npm rebuild $scripted --loglevel=error >/dev/null; fi
  addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node
  kept="$HOME/.cache/pressroom/better-sqlite3-$(node -p "require('./node_modules/better-sqlite3/package.json').version")-abi$(node -p process.versions.modules)-$(uname -m).node"
  if [ -f "$kept" ]; then
    mkdir -p "$(dirname "$addon")" && cp "$kept" "$addon"
  else
    npm rebuild better-sqlite3 --loglevel=error >/dev/null
    mkdir -p "$(dirname "$kept")" && cp "$addon" "$kept"
  fi
  echo "$want" > "$stamp"
fi

echo "[setup] build"
npm run --silent build

# `--test`: the n8n community node (integrations/n8n, its own package) and the n8n runtime packages its
# test runs it with (test/e2e/api/n8n-node.test.ts). --ignore-scripts: n8n-workflow brings isolated-vm,
# whose native build needs Node 22; n8n loads it only for its optional VM expression engine.
if [ "${1:-}" = "--test" ]; then
  n8n_stamp=integrations/n8n/node_modules/.pressroom-lock-hash
  n8n_want=$(sha256sum integrations/n8n/package-lock.json | cut -d' ' -f1)
  if [ ! -f "$n8n_stamp" ] || [ "$(cat "$n8n_stamp")" != "$n8n_want" ]; then
    echo "[setup] integrations/n8n: npm ci"
    (cd integrations/n8n && npm ci --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error)
    echo "$n8n_want" > "$n8n_stamp"
  fi
  n8n_built=integrations/n8n/dist/nodes/Pressroom/Pressroom.node.js
  if [ ! -f "$n8n_built" ] || [ -n "$(find integrations/n8n/nodes integrations/n8n/credentials -newer "$n8n_built" -print -quit)" ]; then
    echo "[setup] integrations/n8n: build"
    (cd integrations/n8n && npm run --silent build)
  fi
  # The official e-invoice rules pack (issue 41; docs/einvoice.md "The official rules"), installed
  # as an operator installs it, from the publishers' files beside the checkout (../shared/einvoice-rules)
  # when they are there, else downloaded from their pinned URLs. Its compiled stylesheets land in the
  # compile cache (~/.cache/pressroom/einvoice-rules, keyed by the inputs' hashes), so each test's own
  # install copies them in a second; only a cold cache compiles (a minute or two).
  rules_from=()
  if [ -f ../shared/einvoice-rules/SHA256SUMS ]; then rules_from=(--from ../shared/einvoice-rules); fi
  rules_data=$(mktemp -d)
  echo "[setup] e-invoice rules pack ${rules_from[*]:-(downloading)}"
  PRESSROOM_DATA_DIR="$rules_data" node bin/pressroom.js --init einvoice rules install "${rules_from[@]}" >/dev/null
  rm -rf "$rules_data"
fi
