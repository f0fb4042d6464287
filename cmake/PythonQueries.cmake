# Facts the build needs from the Python environment: where torch's CMake
# package and libraries are, and where the xla-cpu-pjrt wheel put the PJRT
# header and the CPU plugin.
execute_process(
  COMMAND ${Python_EXECUTABLE} -c "import torch, os; print(torch.utils.cmake_prefix_path); print(os.path.join(os.path.dirname(torch.__file__), 'lib'))"
  OUTPUT_VARIABLE _torch_out OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
string(REPLACE "\n" ";" _torch_out "${_torch_out}")
list(GET _torch_out 0 TORCH_CMAKE_PREFIX)
list(GET _torch_out 1 TORCH_LIB_DIR)

execute_process(
  COMMAND ${Python_EXECUTABLE} -c "import importlib.util, os; s = importlib.util.find_spec('xla_plugins.xla_cpu_pjrt'); d = list(s.submodule_search_locations)[0]; print(os.path.join(d, 'include')); print(os.path.join(d, 'xla_cpu_pjrt.so'))"
  OUTPUT_VARIABLE _pjrt_out OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _pjrt_rc)
if(NOT _pjrt_rc EQUAL 0)
  message(FATAL_ERROR "The xla-cpu-pjrt wheel is needed for pjrt_c_api.h: pip install xla-cpu-pjrt")
endif()
string(REPLACE "\n" ";" _pjrt_out "${_pjrt_out}")
list(GET _pjrt_out 0 PJRT_INCLUDE_DIR)
list(GET _pjrt_out 1 PJRT_CPU_PLUGIN_PATH)
message(STATUS "PJRT header: ${PJRT_INCLUDE_DIR}; CPU plugin: ${PJRT_CPU_PLUGIN_PATH}")
