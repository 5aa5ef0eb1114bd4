# ltorch_extension.cmake — builds a native extension for ltorch: a plain C/C++ shared library of
# kernels over raw tensor data, loaded from Lua with ffi.load and called on x:data_ptr().
#
#   include(<ltorch>/cmake/ltorch_extension.cmake)
#   ltorch_add_extension(swish swish.c)        # -> libswish.so in the build folder
#
# The library needs neither libtorch nor Lua headers: the Lua side checks dtype, device and
# contiguity, allocates outputs with torch.empty_like, and passes pointers plus an element count.
# Built position-independent, optimised (-O2 unless a build type says otherwise), C11/C++17,
# with hidden visibility except for what the sources mark LTORCH_EXPORT (defined on the command
# line as __attribute__((visibility("default")))).
include_guard(GLOBAL)

function(ltorch_add_extension name)
  if(NOT ARGN)
    message(FATAL_ERROR "ltorch_add_extension(${name}): no sources given")
  endif()
  add_library(${name} SHARED ${ARGN})
  set_target_properties(${name} PROPERTIES
    C_STANDARD 11 C_STANDARD_REQUIRED ON
    CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
    POSITION_INDEPENDENT_CODE ON
    C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden)
  target_compile_definitions(${name} PRIVATE "LTORCH_EXPORT=__attribute__((visibility(\"default\")))")
  if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
    target_compile_options(${name} PRIVATE -O2)
  endif()
  if(UNIX)
    target_link_libraries(${name} PRIVATE m)
  endif()
  if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${name} PRIVATE -Wall -Wextra)
  endif()
endfunction()
