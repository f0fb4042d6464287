#pragma once
// Handing back the resident pages of a loaded library's read-only segments.
//
// A PJRT plugin is a large library (the CPU plugin's code is 135 MB: XLA's compiler and
// LLVM). Its static initializers and a compile fault in tens of MB of its code and
// constants, which then stay resident in the process although the steps that follow run
// a small part of them. Those pages are clean copies of the file: advising them away
// (MADV_DONTNEED) unmaps them from the process and leaves them in the page cache, and the
// code that runs again faults its pages back from there (minor faults, no disk reads
// while the page cache holds them).
namespace torch_xla::runtime::internal {

// Advises away the pages of every PT_LOAD segment of the library `dl_handle` (from
// dlopen) that is mapped without write permission: its code, constants and unwind
// tables. Those pages were never written (a library with text relocations, which the
// loader writes, is left alone), so nothing is lost. Safe while other threads run the
// library's code: they fault the pages back.
void ReleaseReadOnlyPages(void* dl_handle);

}  // namespace torch_xla::runtime::internal
