# A precompiled header of PyTorch's headers for the units that include them.
#
# Parsing ATen's headers costs each such unit 5-6 s of its 8 s (g++ 12, -O3); with the
# precompiled header the unit takes 2-3 s. Units that include no PyTorch header (the
# runtime, IR and lowering layers) are left without it: loading the 400 MB header would
# cost them more (about 1.5 s) than they take to compile.
#
#   use_pytorch_precompiled_header(<target> <sources>... [EXTRA <header>...])
function(use_pytorch_precompiled_header target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "EXTRA")
  set(with_torch "")
  foreach(src ${arg_UNPARSED_ARGUMENTS})
    file(STRINGS ${src} torch_includes REGEX "^#include <(ATen|torch|c10)/")
    if(torch_includes)
      list(APPEND with_torch ${src})
    else()
      set_source_files_properties(${src} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
  if(with_torch)
    target_precompile_headers(${target} PRIVATE
      <ATen/ATen.h> <torch/library.h> <algorithm> <cmath> <optional> <string> <vector> ${arg_EXTRA})
  endif()
endfunction()
