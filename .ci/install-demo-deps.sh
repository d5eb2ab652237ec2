#!/usr/bin/env bash
# Installs what the demo's window test needs on a fresh Debian 12 machine:
# an X server without a display (Xvfb) and the libraries eframe/winit/glutin
# dlopen at run time (X11, Xcursor, Xi, xkbcommon-x11, GL via GLX with
# Mesa's software rasteriser).  The demo captures its own window through
# eframe's screenshot API, so no screenshot tool is needed.
#
# Idempotent and quiet; safe to call from .ci/run.  Without root (or apt)
# it says so and exits 0: the window test then skips with a message.
set -euo pipefail

# libllvm15 and libllvm14: the shader JIT's LLVM code generator loads
# libLLVM at run time (systems/shader/src/jit/llvm/api.rs); Mesa's DRI
# drivers pull in 15 already, 14 is the other version it accepts and CI
# tests both.
pkgs=(xvfb xauth libx11-6 libxcursor1 libxi6 libxrandr2 libxkbcommon-x11-0
      libgl1 libglx-mesa0 libgl1-mesa-dri libegl1 libegl-mesa0
      libllvm15 libllvm14)

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-demo-deps: all present"
    exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "install-demo-deps: cannot install ${missing[*]} (need root and apt-get); the window test will skip"
    exit 0
fi
echo "install-demo-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-demo-deps: done"
