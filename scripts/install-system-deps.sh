#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages needed to build, run and test Wyckoff Desk.
# Idempotent: does nothing when everything is already installed.
set -euo pipefail

PACKAGES=(
  build-essential pkg-config curl file libssl-dev
  libwebkit2gtk-4.1-dev libjavascriptcoregtk-4.1-dev libgtk-3-dev libsoup-3.0-dev
  libayatana-appindicator3-dev librsvg2-dev libxdo-dev
  dbus libdbus-1-dev libsecret-1-dev gnome-keyring libsecret-tools
  squashfs-tools
  xvfb xauth at-spi2-core webkit2gtk-driver imagemagick fonts-wqy-microhei fonts-noto-color-emoji
  python3 python3-jeepney python3-venv
  systemd
)
# dbus-x11 is deliberately absent: with it, a keychain call on a display without a
# session bus hangs on an unlock prompt (PLATFORM.md §6).

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "system packages: all present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "installing: ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
