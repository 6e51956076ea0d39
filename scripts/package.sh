#!/usr/bin/env bash
# Builds the desktop installer for Debian and Ubuntu:
#   target/release/bundle/deb/Gatehouse_VERSION_ARCH.deb
# It installs the desktop app (/usr/bin/gatehouse-desktop, with a menu entry
# and icons), the UI it serves (/usr/lib/Gatehouse/ui) and the command-line
# tool (/usr/bin/gatehouse). Install it with `sudo apt install ./Gatehouse_*.deb`.
# The Tauri CLI comes from npm at the version of the tauri crate in Cargo.lock.
# Binaries are stripped and built with whole-program (fat) link-time
# optimisation in one codegen unit: 4.4 MB less code in the desktop app and
# 5 MB less of it resident at idle (docs/benchmarks.md), for a release
# build of about 10 minutes instead of 8. The package depends on the glibc
# they were linked against (2.36 or later when the build packs relocations,
# see src-tauri/build.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_PROFILE_RELEASE_STRIP=symbols CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

(cd ui && npm ci --no-audit --no-fund && npm run build)
cargo build --release --locked -p gatehouse-cli
tauri_version=$(awk '$0 == "name = \"tauri\"" { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
tauri() { (cd src-tauri && npx --yes "@tauri-apps/cli@$tauri_version" "$@"); }
tauri build --no-bundle --config tauri.bundle.conf.json -- --locked

# The newest glibc symbol version either binary needs; a packed-relocation
# binary needs 2.36 (GLIBC_ABI_DT_RELR) whatever its symbols say.
bins=("$target/release/gatehouse-desktop" "$target/release/gatehouse")
glibc=$(objdump -p "${bins[@]}" | grep -o 'GLIBC_2\.[0-9]*' | sed 's/GLIBC_//' | sort -t. -k2 -n -u | tail -1)
if objdump -p "${bins[@]}" | grep -q GLIBC_ABI_DT_RELR && [ "${glibc#2.}" -lt 36 ]; then
  glibc=2.36
fi
extra=$(printf '{"bundle":{"linux":{"deb":{"depends":["libc6 (>= %s)"],"files":{"/usr/bin/gatehouse":"%s"}}}}}' \
  "$glibc" "$target/release/gatehouse")
tauri bundle --bundles deb --config tauri.bundle.conf.json --config "$extra"
ls -l "$target"/release/bundle/deb/*.deb
