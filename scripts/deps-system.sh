#!/usr/bin/env bash
# Install the Debian packages the kernel needs (OpenMPI, libyaml, build tools) and the C formatter `make lint` checks
# with (clang-format 14, Debian 12's: another version formats otherwise), and strace (the strace profile). Idempotent.
set -euo pipefail
pkgs=(openmpi-bin libopenmpi-dev libyaml-dev cmake pkg-config zlib1g-dev dpkg-dev clang-format-14 strace)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps-system: all present (${pkgs[*]})"
  exit 0
fi
echo "deps-system: installing ${missing[*]}"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
