#include "runtime/library_pages.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>

#include "runtime/page_size.h"

namespace torch_xla::runtime::internal {
namespace {

// A library whose code the loader patched (text relocations) has private, written pages
// in its read-only segments: advising those away would revert them to the file's bytes.
bool HasTextRelocations(const link_map* map) {
  for (const ElfW(Dyn)* entry = map->l_ld; entry->d_tag != DT_NULL; ++entry) {
    if (entry->d_tag == DT_TEXTREL) return true;
    if (entry->d_tag == DT_FLAGS && (entry->d_un.d_val & DF_TEXTREL) != 0) return true;
  }
  return false;
}

int AdviseReadOnlySegments(dl_phdr_info* info, std::size_t, void* data) {
  const auto* map = static_cast<const link_map*>(data);
  if (info->dlpi_addr != map->l_addr || info->dlpi_name == nullptr || std::strcmp(info->dlpi_name, map->l_name) != 0)
    return 0;
  const uintptr_t page = PageSize();
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD || (segment.p_flags & PF_W) != 0) continue;
    // Whole pages inside the segment only: a page it shares with a writable neighbour
    // (older linkers' layouts) keeps its contents.
    const uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    const uintptr_t begin = (start + page - 1) & ~(page - 1);
    const uintptr_t end = (start + segment.p_memsz) & ~(page - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }
  return 1;  // found: stop iterating
}

}  // namespace

void ReleaseReadOnlyPages(void* dl_handle) {
  link_map* map = nullptr;
  if (dl_handle == nullptr || dlinfo(dl_handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return;
  if (HasTextRelocations(map)) return;
  dl_iterate_phdr(AdviseReadOnlySegments, map);
}

}  // namespace torch_xla::runtime::internal
