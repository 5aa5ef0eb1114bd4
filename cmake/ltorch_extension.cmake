# ltorch_extension.cmake — builds a native extension for ltorch: a plain C/C++ (and optionally
# CUDA) shared library of kernels over raw tensor data, loaded from Lua with ffi.load and called
# on x:data_ptr().
#
#   include(<ltorch>/cmake/ltorch_extension.cmake)
#   ltorch_add_extension(swish swish.c)           # -> libswish.so in the build folder
#   ltorch_add_extension(swish swish.c swish.cu)  # the same, plus CUDA kernels when nvcc is found
#
# The library needs neither libtorch nor Lua headers: the Lua side checks dtype, device and
# contiguity, allocates outputs with torch.empty_like, and passes pointers plus an element count.
# Built position-independent, optimised (-O2 unless a build type says otherwise), C11/C++17,
# with hidden visibility except for what the sources mark LTORCH_EXPORT (defined on the command
# line as __attribute__((visibility("default")))).
#
# CUDA (.cu sources): ltorch_add_extension looks for a CUDA compiler with check_language(CUDA),
# which honours -DCMAKE_CUDA_COMPILER=/path/to/nvcc, $CUDACXX, then nvcc on PATH
# (-DCMAKE_CUDA_COMPILER= with an empty value turns CUDA off). Found: CUDA is enabled and the .cu
# files are built as CUDA 17 against the shared CUDA runtime (CUDA::cudart: libcudart.so.N, which
# a CUDA libtorch has loaded already, so both share one runtime and its default stream), for
# CMAKE_CUDA_ARCHITECTURES, default "80;90" (A100, H100/H200; cached, so -D overrides it; a
# caller that enabled CUDA itself keeps its own value). Not found: the library is built from the
# other sources alone and one STATUS line says so; the Lua side must then look its CUDA symbols
# up lazily and refuse CUDA tensors. A macro, because enable_language must run at directory
# scope; its own variables are unset before it returns.
include_guard(GLOBAL)

macro(ltorch_add_extension name)
  set(_ltorch_ext_sources ${ARGN})
  set(_ltorch_ext_cuda ${ARGN})
  list(FILTER _ltorch_ext_cuda INCLUDE REGEX "\\.cu$")
  if(_ltorch_ext_cuda)
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
        set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures of ltorch extensions")
      endif()
      enable_language(CUDA)
      find_package(CUDAToolkit REQUIRED)
    else()
      list(FILTER _ltorch_ext_sources EXCLUDE REGEX "\\.cu$")
      list(JOIN _ltorch_ext_cuda ", " _ltorch_ext_cuda_names)
      message(STATUS "ltorch_add_extension(${name}): no CUDA compiler found, so the CUDA kernels "
        "(${_ltorch_ext_cuda_names}) were left out and ${name} is CPU-only; to build them install "
        "the CUDA toolkit and put nvcc on PATH, or set CUDACXX or -DCMAKE_CUDA_COMPILER=/path/to/nvcc")
      set(_ltorch_ext_cuda)
    endif()
  endif()
  _ltorch_add_extension("${name}" "${_ltorch_ext_cuda}" ${_ltorch_ext_sources})
  unset(_ltorch_ext_sources)
  unset(_ltorch_ext_cuda)
  unset(_ltorch_ext_cuda_names)
endmacro()

# The target itself: `cuda` is the list of .cu sources to build (empty: none, or no compiler).
function(_ltorch_add_extension name cuda)
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
    target_compile_options(${name} PRIVATE "$<$<COMPILE_LANGUAGE:C,CXX>:-Wall;-Wextra>")
  endif()
  if(cuda)
    set_target_properties(${name} PROPERTIES
      CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
      CUDA_VISIBILITY_PRESET hidden
      CUDA_RUNTIME_LIBRARY Shared)
    target_link_libraries(${name} PRIVATE CUDA::cudart)
    # Without a CUDA libtorch in the process (which brings its own libcudart.so.N, reused by
    # soname), the library still loads: its build RUNPATH names the toolkit's runtime.
    set_property(TARGET ${name} APPEND PROPERTY BUILD_RPATH "${CUDAToolkit_LIBRARY_DIR}")
  endif()
endfunction()
