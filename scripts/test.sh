#!/usr/bin/env bash
# The whole test suite with everything it needs: installs what is missing (as root: Debian packages for
# PostgreSQL, Chromium, promtool and an older Java; the llama.cpp chroot; the Python SDK and the Node.js clients,
# both unpacked into the checkout), then runs ./mvnw -B verify with the arguments given. .ci/run calls exactly this.
# Without root, where something is missing it stops with one line saying what (the tests that need it would be
# skipped outside CI, and fail in CI).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ "$(id -u)" != 0 ]; then
  missing=()
  compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || missing+=(postgresql)
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
  grep -qsE 'JAVA_VERSION="(1\.)?([89]|1[0-9]|2[0-4])[."]' /usr/lib/jvm/*/release || missing+=(default-jre-headless)
  bash scripts/llama-server-chroot.sh check >/dev/null 2>&1 || missing+=("the llama.cpp chroot")
  if [ ${#missing[@]} -gt 0 ]; then
    echo "scripts/test.sh: run it as root (sudo) to install what the full suite needs: ${missing[*]}" >&2
    exit 1
  fi
fi

started=$SECONDS
updated=false
apt_install() {
  if [ "$updated" = false ]; then
    apt-get update -qq
    updated=true
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
if ! command -v debootstrap >/dev/null 2>&1; then
  apt_install debootstrap
fi
# PostgreSQL for the multi-replica tests (SharedPolicyStoreTest, ReplicasIT): they start their own cluster with
# the package's initdb/pg_ctl as the postgres user, and fail when CI=true and it is missing.
if ! compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; then
  apt_install postgresql
fi
echo "PostgreSQL for the replica tests: $(ls -d /usr/lib/postgresql/*/bin | tail -1)"

# A Java runtime older than 25 for the tests of what the jar says on one (JavaVersionCheckTest, JarLaunchIT):
# Debian's default-jre-headless (17 on Debian 12, 21 on 13). They fail when CI=true and none is found.
if ! grep -qsE 'JAVA_VERSION="(1\.)?([89]|1[0-9]|2[0-4])[."]' /usr/lib/jvm/*/release; then
  apt_install default-jre-headless
fi

# Headless Chromium for the console's browser test (ConsoleBrowserTest drives it over the DevTools protocol) and
# promtool (Debian's prometheus package) for the alert rules' check (MonitoringAssetsTest); both fail when CI=true
# and the tool is missing.
if ! command -v chromium >/dev/null 2>&1; then
  apt_install chromium
fi
if ! command -v promtool >/dev/null 2>&1; then
  apt_install prometheus
fi

# Debian sid chroot with llama.cpp (llama-server, llama-quantize, llama-bench): the reference the tests
# compare against. Idempotent; LAZARUS_CHROOT may point it at a cached directory.
bash scripts/llama-server-chroot.sh setup
echo "llama.cpp in the chroot: $(bash scripts/llama-server-chroot.sh version | head -1)"
echo "setup took $((SECONDS - started)) s"

# The official OpenAI Python SDK for OpenAiPythonSdkRealServerTest: Debian's python3-openai and its pure-Python
# dependencies, unpacked into .python-sdk (nothing installed; see the script).
bash scripts/python-sdk/setup.sh >/dev/null

# The official Node.js SDKs and agent CLIs (openai, @anthropic-ai/sdk, @openai/agents, Codex CLI, Claude Code) for
# the real-client tests, into .node-clients (see the script).
bash scripts/node-clients/setup.sh


./mvnw -B verify "$@"
