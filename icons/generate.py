#!/usr/bin/env python3
"""Rasterises icon.svg into the icon set Tauri bundles (PNG sizes, .ico,
.icns). Needs rsvg-convert (Debian: librsvg2-bin). Run from anywhere:
`python3 icons/generate.py`. The outputs are committed; run this again
only after changing icon.svg."""

import struct
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
SVG = HERE / "icon.svg"


def png(size: int) -> bytes:
    return subprocess.run(
        ["rsvg-convert", "--width", str(size), "--height", str(size), "--format", "png", str(SVG)],
        check=True,
        capture_output=True,
    ).stdout


def ico(sizes: list[int]) -> bytes:
    """A Windows icon whose entries are PNGs (supported since Vista)."""
    images = [png(s) for s in sizes]
    header = struct.pack("<HHH", 0, 1, len(images))
    offset = 6 + 16 * len(images)
    entries, data = b"", b""
    for size, image in zip(sizes, images):
        dim = 0 if size >= 256 else size
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(image), offset + len(data))
        data += image
    return header + entries + data


def icns() -> bytes:
    """A macOS icon: PNG entries by their OSType."""
    types = [("icp4", 16), ("icp5", 32), ("icp6", 64), ("ic07", 128), ("ic08", 256), ("ic09", 512), ("ic10", 1024)]
    body = b"".join(kind.encode() + struct.pack(">I", 8 + len(image)) + image for kind, image in ((k, png(s)) for k, s in types))
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> None:
    for name, size in [("32x32.png", 32), ("64x64.png", 64), ("128x128.png", 128), ("128x128@2x.png", 256), ("icon.png", 512)]:
        (HERE / name).write_bytes(png(size))
    (HERE / "icon.ico").write_bytes(ico([16, 24, 32, 48, 64, 256]))
    (HERE / "icon.icns").write_bytes(icns())


if __name__ == "__main__":
    main()
