#include "runtime/elf_import_rebind.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>

#include "runtime/page_size.h"

namespace torch_xla::runtime::internal {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_X86_64_GLOB_DAT;
constexpr bool kKnownPlatform = true;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
constexpr bool kKnownPlatform = true;
#else
constexpr uint32_t kJumpSlot = 0;
constexpr uint32_t kGlobDat = 0;
constexpr bool kKnownPlatform = false;
#endif

struct DynamicTables {
  const ElfW(Sym)* symbols = nullptr;
  const char* strings = nullptr;
  const ElfW(Rela)* plt_relocations = nullptr;
  size_t plt_bytes = 0;
  const ElfW(Rela)* relocations = nullptr;
  size_t relocation_bytes = 0;
};

// glibc rebases the addresses in a writable .dynamic section when it loads the library;
// where it did not (a read-only .dynamic), they are still relative to the load base.
ElfW(Addr) Absolute(const link_map* map, ElfW(Addr) address) {
  return address < map->l_addr ? address + map->l_addr : address;
}

DynamicTables ReadDynamicTables(const link_map* map) {
  DynamicTables tables;
  for (const ElfW(Dyn)* entry = map->l_ld; entry->d_tag != DT_NULL; ++entry) {
    switch (entry->d_tag) {
      case DT_SYMTAB:
        tables.symbols = reinterpret_cast<const ElfW(Sym)*>(Absolute(map, entry->d_un.d_ptr));
        break;
      case DT_STRTAB:
        tables.strings = reinterpret_cast<const char*>(Absolute(map, entry->d_un.d_ptr));
        break;
      case DT_JMPREL:
        tables.plt_relocations = reinterpret_cast<const ElfW(Rela)*>(Absolute(map, entry->d_un.d_ptr));
        break;
      case DT_PLTRELSZ:
        tables.plt_bytes = entry->d_un.d_val;
        break;
      case DT_RELA:
        tables.relocations = reinterpret_cast<const ElfW(Rela)*>(Absolute(map, entry->d_un.d_ptr));
        break;
      case DT_RELASZ:
        tables.relocation_bytes = entry->d_un.d_val;
        break;
      default:
        break;
    }
  }
  return tables;
}

// The pages the loader made read-only after relocating (PT_GNU_RELRO, rounded to whole
// pages as the loader does); with RTLD_NOW the GOT lies there.
struct ReadOnlyRange {
  uintptr_t begin = 0;
  uintptr_t end = 0;
};

ReadOnlyRange FindRelro(const link_map* map) {
  struct Search {
    const link_map* map;
    ReadOnlyRange range;
  } search{map, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* search = static_cast<Search*>(data);
        if (info->dlpi_addr != search->map->l_addr) return 0;
        const uintptr_t page_size = PageSize();
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& header = info->dlpi_phdr[i];
          if (header.p_type != PT_GNU_RELRO) continue;
          const uintptr_t begin = info->dlpi_addr + header.p_vaddr;
          search->range.begin = begin & ~(page_size - 1);
          search->range.end = (begin + header.p_memsz) & ~(page_size - 1);
        }
        return 1;
      },
      &search);
  return search.range;
}

// Writes `value` into a GOT slot; a read-only page is made writable for the write only.
bool WriteSlot(void** slot, void* value, const ReadOnlyRange& read_only) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(slot);
  if (address < read_only.begin || address >= read_only.end) {
    *slot = value;
    return true;
  }
  const uintptr_t page_size = PageSize();
  void* page = reinterpret_cast<void*>(address & ~(page_size - 1));
  if (mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0) return false;
  *slot = value;
  mprotect(page, page_size, PROT_READ);
  return true;
}

int RebindIn(const link_map* map, const DynamicTables& tables, const ReadOnlyRange& read_only,
             const ElfW(Rela)* relocations, size_t bytes, std::span<const ImportRebinding> rebindings) {
  if (relocations == nullptr) return 0;
  int bound = 0;
  for (size_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
    const ElfW(Rela)& relocation = relocations[i];
    const uint32_t type = ELF64_R_TYPE(relocation.r_info);
    if (type != kJumpSlot && type != kGlobDat) continue;
    const uint32_t symbol_index = ELF64_R_SYM(relocation.r_info);
    if (symbol_index == 0) continue;
    const char* name = tables.strings + tables.symbols[symbol_index].st_name;
    for (const ImportRebinding& rebinding : rebindings) {
      if (std::strcmp(name, rebinding.symbol) != 0) continue;
      void** slot = reinterpret_cast<void**>(map->l_addr + relocation.r_offset);
      if (*slot == rebinding.replacement || WriteSlot(slot, rebinding.replacement, read_only)) ++bound;
      break;
    }
  }
  return bound;
}

}  // namespace

int RebindImports(void* dl_handle, std::span<const ImportRebinding> rebindings) {
  if (!kKnownPlatform || dl_handle == nullptr) return 0;
  link_map* map = nullptr;
  if (dlinfo(dl_handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return 0;
  const DynamicTables tables = ReadDynamicTables(map);
  if (tables.symbols == nullptr || tables.strings == nullptr) return 0;
  const ReadOnlyRange read_only = FindRelro(map);
  return RebindIn(map, tables, read_only, tables.plt_relocations, tables.plt_bytes, rebindings) +
         RebindIn(map, tables, read_only, tables.relocations, tables.relocation_bytes, rebindings);
}

}  // namespace torch_xla::runtime::internal
