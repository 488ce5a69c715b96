"""The compiled kernels export nothing but their module init function: the vendored
C libraries (c-blosc, lz4, zstd, zlib, libdeflate) and our C helpers are linked in
with hidden visibility, so they cannot clash with other copies loaded into the same
process (numcodecs, h5py, a system libz).  And libzstd is linked into one module
only, zarrc._kernels.zstd: the others use its contexts through it.

Each platform's export list is read its own way: Linux (ELF) with ``nm -D``, macOS
(Mach-O) with ``nm -gU`` (names carry a leading underscore there), Windows (PE) by
reading the export table of the .pyd here (``pe_exports``), since Windows machines
have no nm.  Only the Linux branch runs on this project's machines; the readers of
the other two are checked here on canned nm output and on a PE image built by
``pe_image`` (and against llvm-objdump where that is installed)."""

import importlib
import importlib.machinery
import importlib.util
import pkgutil
import shutil
import struct
import subprocess
import sys

import pytest

import zarrc._kernels

# every extension module of the package, found (not listed), so a new one is checked too
MODULES = sorted(
    f"zarrc._kernels.{info.name}"
    for info in pkgutil.iter_modules(zarrc._kernels.__path__)
    if any(str(getattr(importlib.util.find_spec(f"zarrc._kernels.{info.name}"), "origin", "")).endswith(s)
           for s in importlib.machinery.EXTENSION_SUFFIXES)
)
# libzstd's functions that only a module linking the library holds
ZSTD_FUNCTIONS = ("ZSTD_compress2", "ZSTD_decompressDCtx", "ZSTD_createCCtx")

LINUX = sys.platform.startswith("linux")
MACOS = sys.platform == "darwin"
WINDOWS = sys.platform == "win32"
HAVE_NM = shutil.which("nm") is not None

needs_export_reader = pytest.mark.skipif(
    not (WINDOWS or ((LINUX or MACOS) and HAVE_NM)),
    reason="no way to list exported symbols here (Linux and macOS need nm; Windows reads the .pyd)",
)
needs_symbol_table = pytest.mark.skipif(not ((LINUX or MACOS) and HAVE_NM),
                                        reason="reads the full symbol table with nm (Linux, macOS)")


def nm_names(output: str) -> list[str]:
    """The symbol names in nm's output (the last field of each line; lines naming a
    file, as nm prints for archives, are not symbols)."""
    return [line.split()[-1] for line in output.splitlines() if line.strip() and not line.endswith(":")]


def macho_names(output: str) -> list[str]:
    """Symbol names from macOS nm output: C names carry a leading underscore there."""
    return [n[1:] if n.startswith("_") else n for n in nm_names(output)]


def nm(path: str, *flags: str) -> str:
    return subprocess.run(["nm", *flags, path], check=True, capture_output=True, text=True).stdout


# -- the PE (Windows) export table -------------------------------------------------

def pe_exports(data: bytes) -> list[str]:
    """The names a PE image (a .dll / .pyd) exports, read from its export directory;
    an export with no name (by ordinal only) is listed as "#<ordinal>"."""
    if data[:2] != b"MZ":
        raise ValueError("not a PE image (no MZ header)")
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    if data[pe:pe + 4] != b"PE\0\0":
        raise ValueError("not a PE image (no PE signature)")
    nsections, optional_size = struct.unpack_from("<2xH12xH", data, pe + 4)
    optional = pe + 24
    magic = struct.unpack_from("<H", data, optional)[0]
    if magic not in (0x10B, 0x20B):
        raise ValueError(f"unknown optional header magic {magic:#x}")
    directories = optional + (96 if magic == 0x10B else 112)      # PE32, PE32+
    if struct.unpack_from("<I", data, directories - 4)[0] == 0:    # NumberOfRvaAndSizes
        return []
    export_rva = struct.unpack_from("<I", data, directories)[0]
    if export_rva == 0:
        return []
    table = optional + optional_size
    sections = [struct.unpack_from("<8xIIII", data, table + 40 * i) for i in range(nsections)]

    def at(rva: int) -> int:                    # file offset of a relative virtual address
        for vsize, vaddr, raw_size, raw_ptr in sections:
            if vaddr <= rva < vaddr + max(vsize, raw_size):
                return raw_ptr + rva - vaddr
        raise ValueError(f"address {rva:#x} is in no section")

    base, nfunctions, nnames, functions, names, ordinals = struct.unpack_from(
        "<16xIIIIII", data, at(export_rva))
    out, named = [], set()
    for i in range(nnames):
        start = at(struct.unpack_from("<I", data, at(names) + 4 * i)[0])
        out.append(data[start:data.index(b"\0", start)].decode("ascii"))
        named.add(struct.unpack_from("<H", data, at(ordinals) + 2 * i)[0])
    for i in range(nfunctions):
        if i not in named and struct.unpack_from("<I", data, at(functions) + 4 * i)[0]:
            out.append(f"#{base + i}")
    return out


def pe_image(names: list[str], unnamed: int = 0, pe32: bool = False) -> bytes:
    """A minimal PE image (headers and one section) that exports ``names`` and
    ``unnamed`` functions by ordinal only: canned input for pe_exports."""
    va, raw = 0x1000, 0x200
    nfunctions = len(names) + unnamed
    dll = b"canned.pyd\0"
    functions = 40
    name_table = functions + 4 * nfunctions
    ordinal_table = name_table + 4 * len(names)
    strings = ordinal_table + 2 * len(names)
    blob, offsets = bytearray(), []
    for n in [dll, *(s.encode() + b"\0" for s in names)]:
        offsets.append(strings + len(blob))
        blob += n
    export_size = strings + len(blob)
    code = (export_size + 15) & ~15                 # function addresses: past the export data
    section = bytearray(code + 16 * nfunctions)
    struct.pack_into("<12xIIIIIII", section, 0, va + offsets[0], 1, nfunctions, len(names),
                     va + functions, va + name_table, va + ordinal_table)
    for i in range(nfunctions):
        struct.pack_into("<I", section, functions + 4 * i, va + code + 16 * i)
    for i in range(len(names)):
        struct.pack_into("<I", section, name_table + 4 * i, va + offsets[i + 1])
        struct.pack_into("<H", section, ordinal_table + 2 * i, i)
    section[strings:strings + len(blob)] = blob
    raw_size = (len(section) + raw - 1) // raw * raw
    optional_size = (96 if pe32 else 112) + 16 * 8
    head = bytearray(raw)
    head[:2] = b"MZ"
    struct.pack_into("<I", head, 0x3C, 0x40)
    head[0x40:0x44] = b"PE\0\0"
    struct.pack_into("<HHIIIHH", head, 0x44, 0x14C if pe32 else 0x8664, 1, 0, 0, 0, optional_size, 0x2022)
    optional = 0x58
    struct.pack_into("<H", head, optional, 0x10B if pe32 else 0x20B)
    struct.pack_into("<II", head, optional + 32, 0x1000, raw)               # section, file alignment
    struct.pack_into("<II", head, optional + 56, va + 0x1000 * ((len(section) + 0xFFF) // 0x1000), raw)
    struct.pack_into("<H", head, optional + 68, 2)                         # subsystem: GUI
    directories = optional + (96 if pe32 else 112)
    struct.pack_into("<I", head, directories - 4, 16)
    struct.pack_into("<II", head, directories, va, export_size)
    struct.pack_into("<8sIIII12xI", head, optional + optional_size, b".edata", len(section), va,
                     raw_size, raw, 0x40000040)
    return bytes(head) + bytes(section) + bytes(raw_size - len(section))


def exported(path: str) -> list[str]:
    """The names the extension module at ``path`` exports, on this platform."""
    if WINDOWS:
        with open(path, "rb") as f:
            return pe_exports(f.read())
    if MACOS:
        return macho_names(nm(path, "-gU"))
    return nm_names(nm(path, "-D", "--defined-only"))


def defined(path: str) -> set[str]:
    """Every symbol defined in the symbol table of ``path`` (Linux, macOS)."""
    if MACOS:
        return set(macho_names(nm(path, "-U")))
    return set(nm_names(nm(path, "--defined-only")))


# -- the kernels ---------------------------------------------------------------------

def test_every_extension_module_is_found():
    names = {m.rsplit(".", 1)[-1] for m in MODULES}
    assert {"blosc", "zstd", "deflate", "crc32c", "errors", "buffers", "plan", "copy", "shard",
            "slabs"} <= names


@needs_export_reader
@pytest.mark.parametrize("name", MODULES)
def test_exports_only_module_init(name):
    module = importlib.import_module(name)
    names = exported(module.__file__)
    assert f"PyInit_{name.rsplit('.', 1)[-1]}" in names
    assert [s for s in names if not s.startswith("PyInit_")] == []


@needs_symbol_table
@pytest.mark.parametrize("name", MODULES)
def test_zstd_is_linked_into_the_zstd_module_only(name):
    module = importlib.import_module(name)
    symbols = defined(module.__file__)
    if not symbols:
        pytest.skip(f"{module.__file__} is stripped (as in the wheels): no symbol table to look in")
    holds = [f for f in ZSTD_FUNCTIONS if f in symbols]
    if name == "zarrc._kernels.zstd":
        assert holds == list(ZSTD_FUNCTIONS)
    else:
        assert holds == []


# -- the readers, on canned input --------------------------------------------------

def test_macos_nm_output_is_read_without_the_underscore():
    out = ("0000000000003f80 T _PyInit_blosc\n"
           "0000000000008010 T _blosc_decompress\n"
           "\n"
           "/tmp/libx.a(x.o):\n"
           "0000000000000100 S ___dso_handle\n")
    assert macho_names(out) == ["PyInit_blosc", "blosc_decompress", "__dso_handle"]


def test_linux_nm_output_is_read():
    out = "0000000000004c10 T PyInit_plan\n                 U memcpy\n000000000001a2e0 T deflate\n"
    assert nm_names(out) == ["PyInit_plan", "memcpy", "deflate"]


@pytest.mark.parametrize("pe32", [False, True], ids=["PE32+", "PE32"])
def test_pe_export_table_is_read(pe32):
    names = ["PyInit_blosc", "blosc_compress", "libdeflate_alloc_compressor"]
    assert pe_exports(pe_image(names, pe32=pe32)) == names
    assert pe_exports(pe_image(["PyInit_x"], unnamed=2, pe32=pe32)) == ["PyInit_x", "#2", "#3"]
    assert pe_exports(pe_image([], pe32=pe32)) == []


def test_pe_reader_refuses_what_is_not_a_pe_image():
    with pytest.raises(ValueError, match="no MZ header"):
        pe_exports(b"\x7fELF" + bytes(200))
    image = bytearray(pe_image(["PyInit_x"]))
    image[0x40:0x44] = b"XX\0\0"
    with pytest.raises(ValueError, match="no PE signature"):
        pe_exports(bytes(image))


@pytest.mark.skipif(shutil.which("llvm-objdump") is None, reason="llvm-objdump is not installed")
def test_canned_pe_image_is_what_llvm_objdump_reads(tmp_path):
    """The canned image is a PE image an independent reader agrees on."""
    path = tmp_path / "canned.pyd"
    names = ["PyInit_blosc", "blosc_compress"]
    path.write_bytes(pe_image(names))
    out = subprocess.run(["llvm-objdump", "-p", str(path)], check=True, capture_output=True,
                         text=True).stdout
    table = out.split("Export Table:", 1)[1]
    assert "DLL name: canned.pyd" in table
    assert [line.split()[-1] for line in table.splitlines() if line.strip().startswith(("1 ", "2 "))] == names
