#!/bin/sh
# Runs a command under another major version of Node, e.g. `scripts/with-node.sh 24 npx ava test/unit`.
# WHY: CI and developers need to check the gateway on each supported Node line (20, 22, 24) without a
# version manager. The official binary comes from the npm registry (package node-linux-<arch>@<major>)
# and is kept in node_modules/.cache/node<major>, so a second run costs nothing and `npm ci` wipes it.
# The command runs with that node first on PATH, so `npx`, `npm run` and `#!/usr/bin/env node` scripts
# (ava's workers included) all use it.
set -eu

if [ $# -lt 2 ]; then
  echo "usage: $0 <node major, e.g. 24> <command> [args...]" >&2
  exit 2
fi
major=$1
shift
case $major in
  *[!0-9]*|'') echo "$0: the Node version must be a major number such as 24, got '$major'" >&2; exit 2 ;;
esac

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) echo "$0: no official Node package on npm for $(uname -s)" >&2; exit 2 ;;
esac
case "$(uname -m)" in
  x86_64|amd64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) echo "$0: no official Node package on npm for $(uname -m)" >&2; exit 2 ;;
esac
pkg="node-$os-$arch"

root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
dir="$root/node_modules/.cache/node$major"
bin="$dir/node_modules/$pkg/bin"

if [ ! -x "$bin/node" ]; then
  echo "$0: installing $pkg@$major from the npm registry into $dir" >&2
  mkdir -p "$dir"
  # --prefix keeps it out of the project's package.json and lock; no scripts are needed (the
  # package is the binary itself).
  npm install --prefix "$dir" --no-save --no-audit --no-fund --ignore-scripts --loglevel=error "$pkg@$major" >&2
fi
# An installed binary of the wrong line (a stale cache) is an error, not a silent test on another Node.
actual=$("$bin/node" -p 'process.versions.node.split(".")[0]')
if [ "$actual" != "$major" ]; then
  echo "$0: $bin/node is Node $actual, not $major; remove $dir and retry" >&2
  exit 1
fi

PATH="$bin:$PATH"
export PATH
exec "$@"
