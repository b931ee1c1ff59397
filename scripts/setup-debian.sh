#!/usr/bin/env bash
# Installs what Loom's tests need on Debian 12, then the workspace: pnpm at the pinned
# version, the Vulkan loader and Mesa's lavapipe (software WebGPU for Node) from
# bookworm-backports, Chromium (WebGPU in a real browser), and Node 26 from the npm registry
# into .tools/node26 (a second test run; the system Node is left alone). The install commands
# run every time (apt and npm are idempotent), so a broken apt source fails here, loudly,
# on a machine that already has everything. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo_if_needed() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}
die() {
  echo "setup: $*" >&2
  exit 1
}

want_pnpm=$(node -p "require('./package.json').packageManager.split('@')[1]")
if [ "$(pnpm --version 2>/dev/null || true)" != "$want_pnpm" ]; then
  echo "setup: installing pnpm $want_pnpm"
  sudo_if_needed npm install -g --loglevel error "pnpm@$want_pnpm"
fi

# The backports line uses the mirror of the machine's own active Debian source, else the
# standard one.
standard_mirror=http://deb.debian.org/debian
mirror=$(bash scripts/lib/debian-mirror.sh /etc/apt || true)
mirror=${mirror:-$standard_mirror}
echo "setup: Debian mirror $mirror"
backports=/etc/apt/sources.list.d/loom-backports.list
echo "deb $mirror bookworm-backports main" | sudo_if_needed tee "$backports" >/dev/null

apt_update() {
  # apt-get update exits 0 on some fetch failures; its W:/E: lines about failed fetches are
  # what tell. Returns 1 when any source failed.
  local out
  out=$(sudo_if_needed apt-get update -q 2>&1) || { echo "$out" >&2; return 1; }
  if grep -qE '^(W|E): (Failed to fetch|Some index files failed|The repository .* (does not have|no longer has))' <<<"$out"; then
    echo "$out" | grep -E '^(W|E):' >&2
    return 1
  fi
}
if ! apt_update; then
  if [ "$mirror" != "$standard_mirror" ]; then
    echo "setup: apt-get update failed with $mirror; retrying backports from $standard_mirror" >&2
    echo "deb $standard_mirror bookworm-backports main" | sudo_if_needed tee "$backports" >/dev/null
    apt_update || die "apt-get update failed (see the lines above). Fix or disable the failing source in /etc/apt/sources.list or /etc/apt/sources.list.d/, make sure a Debian mirror is reachable, then run this script again."
  else
    die "apt-get update failed (see the lines above). Fix or disable the failing source in /etc/apt/sources.list or /etc/apt/sources.list.d/, make sure a Debian mirror is reachable, then run this script again."
  fi
fi
export DEBIAN_FRONTEND=noninteractive
echo "setup: installing lavapipe (bookworm-backports) and Chromium"
sudo_if_needed apt-get install -y -q -t bookworm-backports mesa-vulkan-drivers libvulkan1 >/dev/null ||
  die "could not install mesa-vulkan-drivers and libvulkan1 from bookworm-backports (see apt's message above)"
sudo_if_needed apt-get install -y -q chromium >/dev/null || die "could not install chromium (see apt's message above)"
[ -f /usr/share/vulkan/icd.d/lvp_icd.json ] || die "lavapipe's ICD file /usr/share/vulkan/icd.d/lvp_icd.json is missing after install"

bash scripts/lib/install-node26.sh
pnpm install --frozen-lockfile
