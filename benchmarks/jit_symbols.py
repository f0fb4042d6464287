"""Names for the code XLA's CPU backend compiles at run time, for a sampling profiler.

XLA registers each object file it JIT-compiles with the GDB JIT interface
(`__jit_debug_descriptor` in the plugin, a list of in-memory ELF objects whose sections
carry their load addresses). `write_perf_map()` walks that list and writes
/tmp/perf-<pid>.map, the file `perf report` reads to name samples in JIT code: each
fusion, loop and kernel XLA emitted then shows under its HLO name (fusion.12,
loop_multiply_fusion, ...) instead of a bare address.

  import jit_symbols; ...run and sample...; jit_symbols.write_perf_map()

Call it after the sampled code has run: oneDNN (DNNL_JIT_PROFILE=2) writes its kernels to
the same file through a stream it opened with "w+", at its own position, so whatever is
appended while it can still generate kernels is overwritten by its next ones (entries
lost, lines spliced).

Used by benchmarks/profile_step.py; a diagnostic, not part of the library.
"""
import ctypes
import os
import struct
import subprocess

_PLUGIN_NAME = 'xla_cpu_pjrt.so'


def _plugin_mapping():
  """(path, load base) of the CPU plugin in this process."""
  with open('/proc/self/maps') as maps:
    for line in maps:
      fields = line.split()
      if len(fields) >= 6 and fields[5].endswith(_PLUGIN_NAME) and int(fields[2], 16) == 0:
        return fields[5], int(fields[0].split('-')[0], 16)
  raise RuntimeError('the CPU plugin is not loaded in this process')


def _descriptor_offset(path):
  out = subprocess.run(['nm', path], capture_output=True, text=True, check=True).stdout
  for line in out.splitlines():
    parts = line.split()
    if len(parts) == 3 and parts[2] == '__jit_debug_descriptor':
      return int(parts[0], 16)
  raise RuntimeError('no __jit_debug_descriptor in ' + path)


def _elf_functions(image):
  """(address, size, name) of the function symbols of an in-memory ELF64 object."""
  shoff, = struct.unpack_from('<Q', image, 0x28)
  shentsize, shnum, shstrndx = struct.unpack_from('<HHH', image, 0x3A)
  sections = [struct.unpack_from('<IIQQQQIIQQ', image, shoff + i * shentsize) for i in range(shnum)]
  functions = []
  for sh in sections:
    if sh[1] != 2:  # SHT_SYMTAB
      continue
    strtab = sections[sh[6]]
    for off in range(sh[4], sh[4] + sh[5], sh[9]):
      name_off, info, _, shndx, value, size = struct.unpack_from('<IBBHQQ', image, off)
      if info & 0xF != 2 or size == 0 or shndx == 0 or shndx >= shnum:  # STT_FUNC
        continue
      start = strtab[4] + name_off
      name = image[start:image.index(b'\0', start)].decode(errors='replace')
      functions.append((sections[shndx][3] + value, size, name))
  return functions


def jit_functions():
  """(address, size, name) of every function XLA has JIT-compiled in this process."""
  path, base = _plugin_mapping()
  descriptor = base + _descriptor_offset(path)
  entry = ctypes.c_uint64.from_address(descriptor + 16).value  # first_entry
  functions = []
  while entry:
    next_entry, _, symfile, size = struct.unpack('<QQQQ', ctypes.string_at(entry, 32))
    functions += _elf_functions(ctypes.string_at(symfile, size))
    entry = next_entry
  return functions


def write_perf_map(path=None):
  """Writes the JIT functions to perf's map file for this process; returns their count."""
  functions = jit_functions()
  path = path or '/tmp/perf-{}.map'.format(os.getpid())
  with open(path, 'a') as out:
    for address, size, name in functions:
      out.write('{:x} {:x} {}\n'.format(address, size, name))
  return len(functions)
