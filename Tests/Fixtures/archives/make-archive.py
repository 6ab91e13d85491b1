#!/usr/bin/env python3
"""Writes a zip or tar archive for the tests, as the spec on standard input says (JSON):

{"path": "/tmp/x/photos.zip",          # .zip, .tar, .tgz or .tar.gz
 "entries": [{"name": "DCIM/a.jpg",     # the entry's name as stored
              "file": "/tmp/a.jpg"      # its bytes from a file, or
              "text": "...",            # from text (UTF-8)
              "stored": true,           # zip: stored, not deflated (default deflated)
              "cp437": true,            # zip: the name in CP437 without the UTF-8 flag (older Windows tools)
              "unflagged": true,        # zip: the name in UTF-8 without the flag (macOS, Linux, 7-Zip)
              "unicode_path": true,     # zip: an ASCII name ("?" for the rest) and Info-ZIP's 0x7075 UTF-8 field
              "link": "target"}],       # a symbolic link entry instead of a file
 "filler": 70000,                       # zip: this many more tiny entries (over 65,535 makes it Zip64)
 "truncate": 0.6}                       # cut the file to this fraction of its size afterwards

Python's zipfile and tarfile make them, so the archives are what common tools write, not what cairn expects.
"""
import json, sys, tarfile, io, os, struct, zipfile, zlib


class CP437Info(zipfile.ZipInfo):
    def _encodeFilenameFlags(self):
        return self.filename.encode("cp437"), self.flag_bits


class UnflaggedInfo(zipfile.ZipInfo):
    def _encodeFilenameFlags(self):
        return self.filename.encode("utf-8"), self.flag_bits


class UnicodePathInfo(zipfile.ZipInfo):
    """As Info-ZIP's zip writes a name its code page cannot hold: a stand-in name, the real one in field 0x7075."""
    def _encodeFilenameFlags(self):
        return self.filename.encode("ascii", "replace"), self.flag_bits

    def unicode_path_extra(self):
        header = self.filename.encode("ascii", "replace")
        name = self.filename.encode("utf-8")
        return struct.pack("<HHBI", 0x7075, 5 + len(name), 1, zlib.crc32(header)) + name


def data(entry):
    if "file" in entry:
        with open(entry["file"], "rb") as f:
            return f.read()
    return entry.get("text", "").encode("utf-8")


def write_zip(spec):
    with zipfile.ZipFile(spec["path"], "w") as archive:
        for entry in spec["entries"]:
            kind = (CP437Info if entry.get("cp437") else UnflaggedInfo if entry.get("unflagged")
                    else UnicodePathInfo if entry.get("unicode_path") else zipfile.ZipInfo)
            info = kind(entry["name"], date_time=(2023, 7, 14, 10, 0, 0))
            if entry.get("unicode_path"):
                info.extra = info.unicode_path_extra()
            info.compress_type = zipfile.ZIP_STORED if entry.get("stored") else zipfile.ZIP_DEFLATED
            if "link" in entry:
                info.create_system = 3
                info.external_attr = (0o120777 << 16)
                archive.writestr(info, entry["link"])
            else:
                archive.writestr(info, data(entry))
        for index in range(spec.get("filler", 0)):
            archive.writestr(zipfile.ZipInfo(f"filler/{index}.txt"), b"")


def write_tar(spec):
    mode = "w:gz" if spec["path"].endswith((".tgz", ".tar.gz")) else "w"
    with tarfile.open(spec["path"], mode) as archive:
        for entry in spec["entries"]:
            info = tarfile.TarInfo(entry["name"])
            info.mtime = 1689328800
            if "link" in entry:
                info.type = tarfile.SYMTYPE
                info.linkname = entry["link"]
                archive.addfile(info)
            else:
                payload = data(entry)
                info.size = len(payload)
                archive.addfile(info, io.BytesIO(payload))


spec = json.load(sys.stdin)
os.makedirs(os.path.dirname(spec["path"]) or ".", exist_ok=True)
(write_zip if spec["path"].endswith(".zip") else write_tar)(spec)
if "truncate" in spec:
    size = os.path.getsize(spec["path"])
    os.truncate(spec["path"], int(size * spec["truncate"]))
