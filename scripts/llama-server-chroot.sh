#!/usr/bin/env bash
# Debian sid chroot holding Debian's llama.cpp (llama-server, llama-quantize, llama-bench, ...),
# used as the reference implementation ("the oracle") by the integration tests and benchmarks.
#
# Usage (as root):
#   llama-server-chroot.sh setup   [DIR]                       create the chroot (idempotent)
#   llama-server-chroot.sh check   [DIR]                       exit 0 when DIR holds a working llama-server
#   llama-server-chroot.sh version [DIR]                       print the installed llama.cpp package version
#   llama-server-chroot.sh run     [DIR] [--bind PATH]... [--cpu-variant NAME] -- ARGS...
#                                                          exec llama-server ARGS inside DIR
#   llama-server-chroot.sh exec    [DIR] [--bind PATH]... [--cpu-variant NAME] TOOL ARGS...
#                                                          exec /usr/bin/TOOL (llama-quantize, llama-bench,
#                                                          llama-tokenize, ...) inside DIR
#   llama-server-chroot.sh variants [DIR]                  list the ggml CPU variants DIR holds
#
# --cpu-variant NAME (or LAZARUS_GGML_CPU_VARIANT=NAME) holds ggml to one CPU variant (zen4, haswell,
# sapphirerapids, ...): ggml otherwise loads the best-scoring libggml-cpu-*.so the host can run, and the
# variants compute differently (sapphirerapids puts weights in AMX buffers; haswell sums 8 lanes where
# zen4 sums 16). Only that variant's file is visible inside the private mount namespace; a variant the host
# cannot run makes ggml fall back to no CPU backend, so llama-server fails to start rather than run another.
# The tests hold it to a non-AMX variant (zen4 where the host runs it): on AMX hosts the sapphirerapids variant
# aborts loading deepseek2 F16/Q8_0 models (GGML_ASSERT(*cur_backend_id != -1)) and computes deepseek2 Q4_K_M far
# from every other variant; --no-repack also avoids the abort, but it turns off the Q4_0/Q4_K repacking too
# (docs/fidelity.md).
#
# DIR defaults to $LAZARUS_CHROOT, else <repo>/.chroot/sid (git-ignored). An argument is taken as DIR
# when it contains a slash or names an existing directory.
#
# Host paths work unchanged inside the chroot: `run` and `exec` bind-mount the current directory, every
# existing absolute path found in the arguments (its directory, for files and for not-yet-existing
# output files) and every --bind PATH at the same absolute path inside the chroot. The mounts live in a
# private mount namespace (unshare), so they vanish with the process and never touch the host's mount
# table. Every step execs the next one: the PID the caller started IS llama-server (tests SIGKILL it).
set -euo pipefail

readonly MIRROR="${LAZARUS_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
readonly SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
readonly DEFAULT_DIR="${LAZARUS_CHROOT:-$REPO_ROOT/.chroot/sid}"

log() { printf 'llama-server-chroot: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
  exit 2
}

require_root() {
  [[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap, chroot and bind mounts need it)"
}

# An argument names the chroot when it looks like a path; tool names never contain a slash.
is_dir_arg() { [[ $# -gt 0 && ( "$1" == */* || -d "$1" ) ]]; }

works() {
  local dir=$1
  [[ -x "$dir/usr/bin/llama-server" ]] && chroot "$dir" /usr/bin/llama-server --version >/dev/null 2>&1
}

installed_version() {
  chroot "$1" dpkg-query -W -f='${Version}\n' llama.cpp-tools 2>/dev/null
}

# Lines of mount points at or below $1, deepest first.
mounts_below() {
  findmnt -rn -o TARGET | awk -v d="$1" '$0 == d || index($0, d "/") == 1' | sort -r
}

# Removes a chroot left behind by an interrupted debootstrap. Refuses anything that does not look like
# one, and unmounts what debootstrap may have left mounted before deleting (never through a mount).
discard_partial() {
  local dir=$1 m
  if [[ -n "$(ls -A "$dir" 2>/dev/null)" && ! -d "$dir/debootstrap" && ! -x "$dir/usr/bin/dpkg" ]]; then
    die "$dir exists, is not empty and is not a chroot: refusing to replace it"
  fi
  while read -r m; do
    [[ -n "$m" ]] && umount -l "$m"
  done < <(mounts_below "$dir")
  log "removing incomplete chroot $dir"
  rm -rf --one-file-system "$dir"
}

ensure_debootstrap() {
  command -v debootstrap >/dev/null 2>&1 && return
  log "installing debootstrap on the host"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}

cmd_setup() {
  local dir=${1:-$DEFAULT_DIR}
  require_root
  if works "$dir"; then
    log "$dir already has a working llama-server ($(installed_version "$dir"))"
    return
  fi
  [[ -e "$dir" ]] && discard_partial "$dir"
  ensure_debootstrap
  mkdir -p "$dir"
  log "debootstrap sid into $dir from $MIRROR"
  local started=$SECONDS
  debootstrap --variant=minbase --include=llama.cpp-tools sid "$dir" "$MIRROR" >&2
  # sid's Release files expire within days; a chroot kept in a cache must still be able to apt-get.
  printf 'Acquire::Check-Valid-Until "false";\n' >"$dir/etc/apt/apt.conf.d/99no-check-valid-until"
  # Keep the chroot lean: its package cache is never needed again.
  rm -rf "$dir"/var/cache/apt/archives/*.deb
  works "$dir" || die "llama-server in $dir does not start (chroot $dir /usr/bin/llama-server --version)"
  log "ready in $((SECONDS - started)) s: llama.cpp-tools $(installed_version "$dir")"
}

cmd_check() {
  local dir=${1:-$DEFAULT_DIR}
  works "$dir"
}

cmd_version() {
  local dir=${1:-$DEFAULT_DIR}
  works "$dir" || die "no working llama-server in $dir (run: $0 setup $dir)"
  installed_version "$dir"
  chroot "$dir" /usr/bin/llama-server --version 2>&1 | grep -iE 'version|built' || true
}

# The directory to bind for one argument: itself when it is an existing directory, else its parent
# when that exists (model files, and output files a tool is about to create). Also looks behind `=`.
bind_target_of() {
  local arg=$1
  [[ "$arg" == *=/* ]] && arg=/${arg#*=/}
  [[ "$arg" == /* ]] || return 1
  if [[ -d "$arg" ]]; then
    printf '%s\n' "$arg"
  elif [[ -d "$(dirname "$arg")" ]]; then
    printf '%s\n' "$(dirname "$arg")"
  else
    return 1
  fi
}

# The directory of ggml's CPU variant libraries inside chroot DIR.
backends_dir() {
  local d
  for d in "$1"/usr/lib/*/ggml/backends*; do
    [[ -e "$d/libggml-cpu-x64.so" || -n "$(ls "$d"/libggml-cpu-*.so 2>/dev/null)" ]] && { printf '%s\n' "$d"; return; }
  done
  return 1
}

cmd_variants() {
  local dir=${1:-$DEFAULT_DIR} b f
  b=$(backends_dir "$dir") || die "no ggml CPU variants in $dir"
  for f in "$b"/libggml-cpu-*.so; do f=${f##*/libggml-cpu-}; printf '%s\n' "${f%.so}"; done
}

# A directory inside the chroot holding only variant $2's library (a hard link, made once), to bind over
# the variants directory. Prints its chroot-absolute path.
variant_only_dir() {
  local dir=$1 variant=$2 b only
  [[ $variant =~ ^[a-z0-9_]+$ ]] || die "bad CPU variant name '$variant'"
  b=$(backends_dir "$dir") || die "no ggml CPU variants in $dir"
  [[ -f "$b/libggml-cpu-$variant.so" ]] || die "no ggml CPU variant '$variant' in $b (have: $(cmd_variants "$dir" | tr '\n' ' '))"
  only="$dir/var/lib/lazarus/ggml-cpu-$variant"
  mkdir -p "$only"
  [[ -e "$only/libggml-cpu-$variant.so" ]] || ln "$b/libggml-cpu-$variant.so" "$only/" 2>/dev/null \
    || cp "$b/libggml-cpu-$variant.so" "$only/"
  printf '%s %s\n' "${only#"$dir"}" "${b#"$dir"}"
}

# exec_in_chroot DIR BIND... -- PROGRAM ARGS...: runs PROGRAM in DIR with the binds, replacing this
# process. The inner shell runs in the new mount namespace and execs chroot, which execs PROGRAM.
# With CPU_VARIANT set, only that ggml CPU variant is visible to PROGRAM.
exec_in_chroot() {
  local dir=$1; shift
  local -a binds=()
  while [[ $1 != -- ]]; do binds+=("$1"); shift; done
  shift
  dir=$(cd "$dir" && pwd -P)
  # Only a cheap check here: a full `works` would start llama-server once more on every call.
  [[ -x "$dir/usr/bin/llama-server" ]] || die "no llama-server in $dir (run: $0 setup $dir)"
  local cwd; cwd=$(pwd -P)
  local variant_mount=""
  [[ -n "${CPU_VARIANT:-}" ]] && variant_mount=$(variant_only_dir "$dir" "$CPU_VARIANT")
  # shellcheck disable=SC2016 # expanded by the inner shell
  exec unshare --mount --propagation private -- bash -euc '
    root=$1 cwd=$2 variant_mount=$3; shift 3
    bind() {   # bind host path $1 at the same path inside the chroot, unless it is the chroot itself
      local src; src=$(readlink -f "$1")
      case "$src/" in "$root"/*) return ;; esac
      case "$root/" in "$src"/*) [ "$src" = / ] && return ;; esac
      mkdir -p "$root$src"
      mountpoint -q "$root$src" || mount --bind "$src" "$root$src"
    }
    mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
    mountpoint -q "$root/dev" || mount --rbind /dev "$root/dev"
    if [ -d /sys ] && ! mountpoint -q "$root/sys"; then mount --rbind /sys "$root/sys" 2>/dev/null || true; fi
    while [ "$1" != -- ]; do bind "$1"; shift; done
    shift
    if [ -n "$variant_mount" ]; then
      set -f; set -- $variant_mount "$@"; set +f
      mount --bind "$root$1" "$root$2"; shift 2
    fi
    [ "$cwd" = / ] || bind "$cwd"
    exec chroot "$root" /bin/sh -c "cd \"\$0\" 2>/dev/null || cd /; exec \"\$@\"" "$cwd" "$@"
  ' bash "$dir" "$cwd" "$variant_mount" "${binds[@]}" -- "$@"
}

# Shared by run and exec: [DIR] [--bind PATH]... then the rest.
parse_dir_and_binds() {
  CHROOT_DIR=$DEFAULT_DIR
  if is_dir_arg "$@"; then CHROOT_DIR=$1; shift; fi
  BINDS=()
  CPU_VARIANT=${LAZARUS_GGML_CPU_VARIANT:-}
  while [[ $# -gt 0 && ( $1 == --bind || $1 == --cpu-variant ) ]]; do
    [[ $# -ge 2 ]] || die "$1 needs a value"
    if [[ $1 == --bind ]]; then BINDS+=("$(readlink -f "$2")"); else CPU_VARIANT=$2; fi
    shift 2
  done
  REST=("$@")
  local arg target
  for arg in "${REST[@]}"; do
    if target=$(bind_target_of "$arg"); then BINDS+=("$target"); fi
  done
}

cmd_run() {
  require_root
  parse_dir_and_binds "$@"
  set -- "${REST[@]}"
  [[ $# -gt 0 && $1 == -- ]] && shift
  exec_in_chroot "$CHROOT_DIR" "${BINDS[@]}" -- /usr/bin/llama-server "$@"
}

cmd_exec() {
  require_root
  parse_dir_and_binds "$@"
  set -- "${REST[@]}"
  [[ $# -gt 0 ]] || die "exec needs a tool name (llama-quantize, llama-bench, llama-tokenize, ...)"
  local tool=$1; shift
  [[ $tool == */* ]] || tool=/usr/bin/$tool
  exec_in_chroot "$CHROOT_DIR" "${BINDS[@]}" -- "$tool" "$@"
}

main() {
  [[ $# -gt 0 ]] || usage
  local cmd=$1; shift
  case $cmd in
    setup)   cmd_setup "$@" ;;
    check)   cmd_check "$@" ;;
    version) cmd_version "$@" ;;
    run)     cmd_run "$@" ;;
    exec)    cmd_exec "$@" ;;
    variants) cmd_variants "$@" ;;
    -h|--help|help) usage ;;
    *) log "unknown command: $cmd"; usage ;;
  esac
}

main "$@"
