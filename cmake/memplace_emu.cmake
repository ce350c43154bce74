# Building CUDA programs for the CPU CUDA layer (emu/, docs/emulation.md).
#
# memplace_add_emulated_executable(TARGET SOURCES a.cu b.cpp ... [DEPS libs...] [INCLUDES dirs...])
#   Compiles every source as C++20 with emu/include first on the include path and
#   memplace/emu/cuda_emu.h pre-included (nvcc pre-includes cuda_runtime.h the same way), and
#   links the memplace_emu library. .cu files are compiled as C++ (-x c++), never as CUDA.
#   The executable exports its symbols (-rdynamic) so that errors name kernels by their names.
set(MEMPLACE_EMU_INCLUDE_DIR ${CMAKE_SOURCE_DIR}/emu/include CACHE INTERNAL "")

function(memplace_add_emulated_executable target)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;INCLUDES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "memplace_add_emulated_executable(${target}): no SOURCES")
  endif()
  add_executable(${target} ${ARG_SOURCES})
  foreach(src ${ARG_SOURCES})
    if(src MATCHES "\\.(cu|cuh)$")
      # LANGUAGE CXX makes CMake pass the file to the C++ compiler; -x c++ stops clang from
      # treating .cu as CUDA.
      set_source_files_properties(${src} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CXX)
      set_property(SOURCE ${src} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS -x c++)
    endif()
  endforeach()
  target_include_directories(${target} BEFORE PRIVATE ${MEMPLACE_EMU_INCLUDE_DIR} ${ARG_INCLUDES})
  target_compile_options(${target} PRIVATE -include memplace/emu/cuda_emu.h)
  target_compile_features(${target} PRIVATE cxx_std_20)
  target_link_libraries(${target} PRIVATE memplace_emu ${ARG_DEPS})
  set_target_properties(${target} PROPERTIES ENABLE_EXPORTS ON)
endfunction()

# memplace_add_emulated_library(TARGET SOURCES a.cpp ... [DEPS libs...] [INCLUDES dirs...])
#   A static library of host code that calls CUDA (the runtime's host library, the Placer)
#   compiled for the emulation layer: emu/include first, memplace/emu/cuda_emu.h pre-included,
#   memplace_emu linked. Link it only into emulated executables.
function(memplace_add_emulated_library target)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;INCLUDES" ${ARGN})
  add_library(${target} STATIC ${ARG_SOURCES})
  target_include_directories(${target} BEFORE PUBLIC ${MEMPLACE_EMU_INCLUDE_DIR})
  target_include_directories(${target} PUBLIC ${MEMPLACE_INCLUDE_ROOT} ${ARG_INCLUDES})
  target_compile_options(${target} PRIVATE -include memplace/emu/cuda_emu.h)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_link_libraries(${target} PUBLIC memplace_emu ${ARG_DEPS})
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
