#!/usr/bin/env bash
# The official OpenAI Python SDK for scripts/python-sdk/openai_sdk_suite.py, from Debian's packages
# (python3-openai and the pure-Python packages it needs), unpacked into DIR without installing anything:
# PyPI is not reachable here, and the host's Debian release has no python3-openai. A private apt
# configuration reads Debian sid's package list into DIR; the host's apt state is left alone. The
# suite runs on the host's python3 with DIR on PYTHONPATH; pydantic (compiled) must come from that
# python (the machine image has it).
#
# Usage: setup.sh [DIR]      DIR defaults to $LAZARUS_PYTHON_SDK, else <repo>/.python-sdk (git-ignored).
# Prints the directory to put on PYTHONPATH. Idempotent.
set -euo pipefail

readonly MIRROR="${LAZARUS_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
readonly REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
readonly DIR="${1:-${LAZARUS_PYTHON_SDK:-$REPO_ROOT/.python-sdk}}"
readonly SITE="$DIR/root/usr/lib/python3/dist-packages"
readonly PACKAGES=(python3-openai python3-httpx2 python3-httpcore2 python3-anyio python3-h11 python3-idna
  python3-truststore python3-sniffio python3-typing-extensions)

if [[ -f "$SITE/openai/__init__.py" ]]; then
  echo "$SITE"
  exit 0
fi
mkdir -p "$DIR/apt/lists/partial" "$DIR/apt/cache/archives/partial" "$DIR/debs"
echo "deb $MIRROR sid main" > "$DIR/apt/sources.list"
apt_opts=(-q -o "Dir::Etc::sourcelist=$DIR/apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent
  -o "Dir::State::Lists=$DIR/apt/lists" -o "Dir::Cache=$DIR/apt/cache" -o APT::Get::List-Cleanup=0
  -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" update >&2
(cd "$DIR/debs" && apt-get "${apt_opts[@]}" download "${PACKAGES[@]}" >&2)
for deb in "$DIR"/debs/*.deb; do
  dpkg -x "$deb" "$DIR/root"
done
python3 -c 'import pydantic' >&2 || { echo "setup.sh: the host python3 has no pydantic" >&2; exit 1; }
echo "$SITE"
