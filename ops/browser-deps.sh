#!/usr/bin/env bash
# Debian's Chromium for the end-to-end UI test (Playwright drives this executable; it never
# downloads a browser of its own).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
if [[ "$(id -u)" == "0" ]]; then apt_get=(apt-get); elif sudo -n true 2>/dev/null; then apt_get=(sudo apt-get); else
  echo "browser-deps: chromium is missing and this user cannot install it; run: sudo apt-get install -y chromium" >&2
  exit 1
fi
echo "browser-deps: installing Debian's chromium" >&2
DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -q chromium >/dev/null 2>&1 || {
  DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -q chromium >/dev/null; }
command -v chromium >/dev/null
