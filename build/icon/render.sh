#!/usr/bin/env bash
# Renders the app icon from build/icon/jarvis.svg: build/appicon.png (1024 px,
# what `wails build` reads), the hicolor theme sizes the .deb installs
# (build/linux/icons/<size>x<size>/jarvis.png) and build/windows/icon.ico.
# The outputs are committed; run this after changing the SVG.
# Needs rsvg-convert (librsvg2-bin) and ImageMagick.
set -euo pipefail
cd "$(dirname "$0")/.."
svg=icon/jarvis.svg
rsvg-convert -w 1024 -h 1024 "$svg" -o appicon.png
for s in 16 24 32 48 64 128 256 512; do
  mkdir -p "linux/icons/${s}x${s}"
  rsvg-convert -w "$s" -h "$s" "$svg" -o "linux/icons/${s}x${s}/jarvis.png"
done
convert linux/icons/16x16/jarvis.png linux/icons/24x24/jarvis.png linux/icons/32x32/jarvis.png \
  linux/icons/48x48/jarvis.png linux/icons/64x64/jarvis.png linux/icons/128x128/jarvis.png \
  linux/icons/256x256/jarvis.png windows/icon.ico
