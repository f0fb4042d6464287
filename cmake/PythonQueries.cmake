# Facts the build needs from the Python environment: where torch's CMake
# package and libraries are, and where the xla-cpu-pjrt wheel put the CPU
# plugin.
execute_process(
  COMMAND ${Python_EXECUTABLE} -c "import torch, os; print(torch.utils.cmake_prefix_path); print(os.path.join(os.path.dirname(torch.__file__), 'lib')); print(int(torch.version.cuda is not None)); print(int(torch._C._GLIBCXX_USE_CXX11_ABI))"
  OUTPUT_VARIABLE _torch_out OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
string(REPLACE "\n" ";" _torch_out "${_torch_out}")
list(GET _torch_out 0 TORCH_CMAKE_PREFIX)
list(GET _torch_out 1 TORCH_LIB_DIR)
list(GET _torch_out 2 TORCH_BUILT_WITH_CUDA)
list(GET _torch_out 3 TORCH_CXX11_ABI)

# The PJRT C API header travels with the project (third_party/pjrt); the CPU plugin's
# wheel, where installed, gives the CPU plugin's path as a default for the runtime.
set(PJRT_INCLUDE_DIR ${CMAKE_SOURCE_DIR}/third_party/pjrt)
execute_process(
  COMMAND ${Python_EXECUTABLE} -c "import importlib.util, os; s = importlib.util.find_spec('xla_plugins.xla_cpu_pjrt'); print(os.path.join(list(s.submodule_search_locations)[0], 'xla_cpu_pjrt.so'))"
  OUTPUT_VARIABLE PJRT_CPU_PLUGIN_PATH OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _pjrt_rc ERROR_QUIET)
if(NOT _pjrt_rc EQUAL 0)
  set(PJRT_CPU_PLUGIN_PATH "")
  message(STATUS "xla-cpu-pjrt is not installed: the CPU plugin is found at run time")
endif()
message(STATUS "PJRT header: ${PJRT_INCLUDE_DIR}; CPU plugin: ${PJRT_CPU_PLUGIN_PATH}")
