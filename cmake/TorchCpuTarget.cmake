# The `torch` target from the wheel's own folders, for a torch built with CUDA.
#
# Torch's CMake package, for such a build, insists on a CUDA toolkit that this CMake can
# drive (it compiles and runs a CUDA probe), although this project links only torch's
# CPU libraries: the device's kernels come from the PJRT plugin, never from torch. So a
# CUDA torch is linked through this target instead: the same headers, libraries,
# definitions and C++ ABI as Torch's own `torch` target, without its CUDA part.
get_filename_component(_torch_root "${TORCH_LIB_DIR}/.." ABSOLUTE)
add_library(torch INTERFACE IMPORTED)
set_target_properties(torch PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${_torch_root}/include;${_torch_root}/include/torch/csrc/api/include"
  INTERFACE_LINK_LIBRARIES "${TORCH_LIB_DIR}/libtorch_cpu.so;${TORCH_LIB_DIR}/libc10.so"
  INTERFACE_COMPILE_DEFINITIONS "USE_C10D_GLOO;USE_DISTRIBUTED;USE_RPC;USE_TENSORPIPE"
  INTERFACE_COMPILE_OPTIONS "-D_GLIBCXX_USE_CXX11_ABI=${TORCH_CXX11_ABI}")
message(STATUS "torch built with CUDA: linking its CPU libraries from ${TORCH_LIB_DIR}")
