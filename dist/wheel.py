#!/usr/bin/env python3
"""Packs the pytest plugin into a wheel, which pip installs offline into a
virtualenv, where the system's site directory is out of sight.

Usage: wheel.py SRC_DIR OUT_WHEEL

SRC_DIR holds the plugin's modules (*.py) and one NAME-VERSION.dist-info
(METADATA, entry_points.txt); OUT_WHEEL must be named
NAME-VERSION-py3-none-any.whl after it. WHEEL and RECORD are written here,
as the wheel format (PEP 427, PEP 376's RECORD) asks. The same sources give
the same bytes: entries sorted, dated 1980-01-01 (zip's earliest date) and
with fixed modes, so a rebuilt package holds an identical wheel.
"""
import base64
import hashlib
import os
import sys
import zipfile

_EPOCH = (1980, 1, 1, 0, 0, 0)
_GENERATOR = "liveguard-bpf (dist/wheel.py)"


def _digest(data):
    raw = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _entry(name):
    info = zipfile.ZipInfo(name, date_time=_EPOCH)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 3  # Unix, so that the mode below is read
    info.external_attr = 0o100644 << 16
    return info


def _fail(what, todo):
    sys.exit("wheel.py: %s; %s" % (what, todo))


def main(argv):
    if len(argv) != 3:
        _fail("expected SRC_DIR and OUT_WHEEL", "usage: wheel.py SRC_DIR OUT_WHEEL")
    src, out = argv[1], argv[2]
    infos = [d for d in sorted(os.listdir(src)) if d.endswith(".dist-info")]
    if len(infos) != 1:
        _fail("%s holds %d *.dist-info directories" % (src, len(infos)),
              "keep exactly one, named NAME-VERSION.dist-info")
    info = infos[0]
    expected = info[: -len(".dist-info")] + "-py3-none-any.whl"
    if os.path.basename(out) != expected:
        _fail("%s does not match %s" % (os.path.basename(out), info), "name the wheel " + expected)

    files = {}
    for name in sorted(os.listdir(src)):
        if name.endswith(".py") and os.path.isfile(os.path.join(src, name)):
            with open(os.path.join(src, name), "rb") as f:
                files[name] = f.read()
    if not files:
        _fail("%s holds no module (*.py)" % src, "put the plugin's module there")
    for name in sorted(os.listdir(os.path.join(src, info))):
        if name in ("WHEEL", "RECORD"):
            continue  # written below, for this wheel
        path = os.path.join(src, info, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                files[info + "/" + name] = f.read()
    files[info + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: %s\nRoot-Is-Purelib: true\n"
                              "Tag: py3-none-any\n" % _GENERATOR).encode("ascii")
    record = info + "/RECORD"
    lines = ["%s,%s,%d\n" % (n, _digest(d), len(d)) for n, d in files.items()]
    files[record] = ("".join(lines) + record + ",,\n").encode("utf-8")

    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w") as z:
        # The modules first, then the dist-info, RECORD last, as the wheel
        # format recommends.
        for name, data in files.items():
            z.writestr(_entry(name), data)
    os.replace(tmp, out)


if __name__ == "__main__":
    main(sys.argv)
