#!/usr/bin/env bash
# Installs the official Node.js SDKs and agent CLIs (openai, @anthropic-ai/sdk, @openai/agents, @openai/codex,
# @anthropic-ai/claude-code) at the versions package.json pins, into <repo>/.node-clients (git-ignored), for the
# gateway's real-client tests. Idempotent: a second run with the same package.json does nothing.
# Usage: setup.sh [DIR]   (DIR defaults to $LAZARUS_NODE_CLIENTS, else <repo>/.node-clients)
set -euo pipefail
readonly SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
readonly DIR="${1:-${LAZARUS_NODE_CLIENTS:-$REPO_ROOT/.node-clients}}"

command -v npm >/dev/null 2>&1 || { echo "node-clients: npm is not installed (Debian: apt-get install nodejs npm)" >&2; exit 1; }
mkdir -p "$DIR"
if [ -f "$DIR/package.json" ] && cmp -s "$SCRIPT_DIR/package.json" "$DIR/package.json" && [ -d "$DIR/node_modules" ]; then
  exit 0
fi
cp "$SCRIPT_DIR/package.json" "$DIR/package.json"
(cd "$DIR" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
echo "node-clients: installed in $DIR"
