# find_libtorch.cmake — finds the libtorch ltorch builds against and sets what CMakeLists.txt uses:
#   TORCH_LIBRARIES, TORCH_INCLUDE_DIRS (through the targets), Torch_VERSION, TORCH_INSTALL_PREFIX,
#   LTORCH_TORCH_CUDA   the libtorch is a CUDA build (lib/libtorch_cuda.so beside libtorch.so)
#   LTORCH_CUDA_TOOLKIT the CUDA toolkit (nvcc) was found: CUDA code can be compiled here
#   LTORCH_NVCC, LTORCH_CUDA_ROOT  its nvcc and its root folder
#
# Where libtorch comes from, first found wins: -DTorch_DIR=... or -DCMAKE_PREFIX_PATH=...; else
# the PyTorch in the repository's .venv (scripts/setup.sh makes it: torch 2.11 from PyPI), asked
# for torch.utils.cmake_prefix_path.
#
# Why not always find_package(Torch): PyPI's torch is a CUDA build, and its TorchConfig then
# requires the CUDA toolkit (nvcc) and stops with "cannot find the CUDA libraries" without it. A
# CPU box does not need the toolkit to use that libtorch: ltorch compiles no CUDA code of its own
# (the bindings reach CUDA through libtorch's device-generic interfaces), and libtorch_cuda.so
# finds its CUDA libraries through its own RPATH. So without nvcc this file imports the libtorch
# directly (the same libraries and flags TorchConfig would give) and says once what the toolkit
# would add.
include_guard(GLOBAL)

if(NOT Torch_DIR AND EXISTS "${CMAKE_SOURCE_DIR}/.venv/bin/python")
  execute_process(
    COMMAND "${CMAKE_SOURCE_DIR}/.venv/bin/python" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
    OUTPUT_VARIABLE _ltorch_venv_cmake OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _ltorch_venv_rc ERROR_QUIET)
  if(_ltorch_venv_rc EQUAL 0 AND IS_DIRECTORY "${_ltorch_venv_cmake}/Torch")
    list(APPEND CMAKE_PREFIX_PATH "${_ltorch_venv_cmake}")
  endif()
endif()

find_path(LTORCH_TORCH_CMAKE_DIR TorchConfig.cmake
  HINTS "${Torch_DIR}" PATH_SUFFIXES share/cmake/Torch Torch)
if(NOT LTORCH_TORCH_CMAKE_DIR)
  message(FATAL_ERROR "ltorch: libtorch not found. Run `bash scripts/setup.sh` (it installs PyTorch "
    "2.11 into .venv), or pass -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch.utils; "
    "print(torch.utils.cmake_prefix_path)').")
endif()
# The real path, not the one through the .venv link: a path inside the source tree counts as the
# project's own, and INSTALL_RPATH_USE_LINK_PATH would leave libtorch's folder out of an
# installed ltorch's RPATH.
get_filename_component(_ltorch_torch_cmake_dir "${LTORCH_TORCH_CMAKE_DIR}" REALPATH)
get_filename_component(_ltorch_torch_prefix "${_ltorch_torch_cmake_dir}/../../.." ABSOLUTE)

set(LTORCH_TORCH_CUDA OFF)
if(EXISTS "${_ltorch_torch_prefix}/lib/libtorch_cuda.so")
  set(LTORCH_TORCH_CUDA ON)
endif()

# The toolkit: nvcc on PATH, under $CUDA_HOME / $CUDA_PATH, or NVIDIA's default /usr/local/cuda;
# -DLTORCH_USE_CUDA_TOOLKIT=OFF builds as if it were absent.
option(LTORCH_USE_CUDA_TOOLKIT "use the CUDA toolkit when found (nvcc: CUDA code of our own)" ON)
find_program(LTORCH_NVCC nvcc HINTS ENV CUDA_HOME ENV CUDA_PATH PATH_SUFFIXES bin PATHS /usr/local/cuda/bin)
set(LTORCH_CUDA_TOOLKIT OFF)
if(LTORCH_NVCC AND LTORCH_USE_CUDA_TOOLKIT)
  set(LTORCH_CUDA_TOOLKIT ON)
  get_filename_component(LTORCH_CUDA_ROOT "${LTORCH_NVCC}/../.." ABSOLUTE)
  # TorchConfig's FindCUDA and FindCUDAToolkit look here even when nvcc is not on PATH, and its
  # enable_language(CUDA) needs the compiler named (CMake looks only on PATH otherwise, and
  # NVIDIA's installer leaves /usr/local/cuda/bin off it).
  set(CUDA_TOOLKIT_ROOT_DIR "${LTORCH_CUDA_ROOT}" CACHE PATH "CUDA toolkit")
  set(CUDAToolkit_ROOT "${LTORCH_CUDA_ROOT}")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    set(CMAKE_CUDA_COMPILER "${LTORCH_NVCC}" CACHE FILEPATH "CUDA compiler")
  endif()
endif()

if(NOT LTORCH_TORCH_CUDA OR LTORCH_CUDA_TOOLKIT)
  # TORCH_CUDA_ARCH_LIST only matters for CUDA code compiled through Torch's flags (none here);
  # set, it keeps TorchConfig from probing for a GPU.
  if(LTORCH_TORCH_CUDA AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    set(ENV{TORCH_CUDA_ARCH_LIST} "9.0")
  endif()
  find_package(Torch REQUIRED PATHS "${_ltorch_torch_cmake_dir}" NO_DEFAULT_PATH)
  return()
endif()

# A CUDA libtorch without the toolkit: import it directly.
message(STATUS "ltorch: no CUDA toolkit (nvcc) found: building against this CUDA libtorch without "
  "compiling CUDA code (libtorch's CUDA kernels are still linked in). The NCCL backend, CUDA graphs and "
  "the CUDA kernel of examples/extension need the toolkit's headers: install it (NVIDIA's CUDA 13 in "
  "/usr/local/cuda, or set CUDA_HOME) and reconfigure.")
include("${_ltorch_torch_cmake_dir}/TorchConfigVersion.cmake")
set(Torch_VERSION "${PACKAGE_VERSION}")
set(TORCH_INSTALL_PREFIX "${_ltorch_torch_prefix}")
set(TORCH_INCLUDE_DIRS "${_ltorch_torch_prefix}/include" "${_ltorch_torch_prefix}/include/torch/csrc/api/include")
set(TORCH_LIBRARIES)
foreach(_lib torch torch_cpu c10 torch_cuda c10_cuda)
  find_library(LTORCH_LIB_${_lib} ${_lib} PATHS "${_ltorch_torch_prefix}/lib" NO_DEFAULT_PATH REQUIRED)
  list(APPEND TORCH_LIBRARIES "${LTORCH_LIB_${_lib}}")
endforeach()
add_library(ltorch_libtorch INTERFACE)
target_include_directories(ltorch_libtorch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
# TorchConfig's TORCH_CXX_FLAGS for a wheel: the C++11 ABI of std::string, which libtorch uses.
target_compile_definitions(ltorch_libtorch INTERFACE _GLIBCXX_USE_CXX11_ABI=1)
# The definitions torch_cpu's imported target carries (USE_DISTRIBUTED, USE_C10D_GLOO, ...: c10d's
# headers declare ProcessGroupGloo only under them), read from the wheel's own target file.
file(READ "${_ltorch_torch_cmake_dir}/../Caffe2/Caffe2Targets.cmake" _ltorch_targets)
string(REGEX MATCH "set_target_properties\\(torch_cpu PROPERTIES[^)]*INTERFACE_COMPILE_DEFINITIONS \"([^\"]*)\""
  _ltorch_match "${_ltorch_targets}")
if(CMAKE_MATCH_1)
  target_compile_definitions(ltorch_libtorch INTERFACE ${CMAKE_MATCH_1})
endif()
target_link_libraries(ltorch_libtorch INTERFACE ${TORCH_LIBRARIES})
set(TORCH_LIBRARIES ltorch_libtorch)
