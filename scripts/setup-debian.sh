#!/usr/bin/env bash
# Installs what Loom's tests need on Debian 12 with Node 20, then the workspace:
# pnpm at the pinned version, the Vulkan loader and Mesa's lavapipe (software WebGPU for Node)
# from bookworm-backports, and Chromium (WebGPU in a real browser). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo_if_needed() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

want_pnpm=$(node -p "require('./package.json').packageManager.split('@')[1]")
if [ "$(pnpm --version 2>/dev/null || true)" != "$want_pnpm" ]; then
  echo "setup: installing pnpm $want_pnpm"
  sudo_if_needed npm install -g "pnpm@$want_pnpm"
fi

missing=()
[ -f /usr/share/vulkan/icd.d/lvp_icd.json ] || missing+=(lavapipe)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  mirror=$(grep -rhoE 'https?://[^ ]+/debian/?' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | grep -v security | head -n 1 || true)
  mirror=${mirror:-http://deb.debian.org/debian}
  echo "deb ${mirror%/} bookworm-backports main" | sudo_if_needed tee /etc/apt/sources.list.d/loom-backports.list >/dev/null
  sudo_if_needed apt-get update -qq
  export DEBIAN_FRONTEND=noninteractive
  sudo_if_needed apt-get install -y -qq -t bookworm-backports mesa-vulkan-drivers libvulkan1 >/dev/null
  sudo_if_needed apt-get install -y -qq chromium >/dev/null
fi

pnpm install --frozen-lockfile
