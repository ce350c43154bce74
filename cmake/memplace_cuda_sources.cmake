# Building a user's CUDA program through memplace (docs/usage.md).
#
# memplace_add_cuda_sources(TARGET FILES a.cu b.cu ...
#                           [BACKEND AUTO|CUDA|EMU] [LAUNCHES_ONLY]
#                           [CLANG_ARGS args...] [DEPENDS files...] [FALLBACK_DIR dir])
#
#   Adds the .cu files to TARGET (an add_executable or add_library target) in their rewritten
#   form. At build time a custom command runs `memplace rewrite FILE -o <build dir>` for each
#   file (it depends on the file, on the memplace binary and on DEPENDS, e.g. headers the file
#   includes), writing into ${CMAKE_CURRENT_BINARY_DIR}/memplace/<TARGET>/: the source tree is
#   never written. The rewritten files are compiled and TARGET is linked with the runtime and the
#   Placer (which installs itself: see docs/placer.md):
#     CUDA  nvcc (the CUDA language; enable_language(CUDA) first), memplace_placer;
#     EMU   the C++ compiler over the CPU emulation layer (docs/emulation.md),
#           memplace_placer_emu: the program runs on the CPU, no GPU or CUDA driver needed;
#     AUTO  CUDA when the CUDA language is enabled, memplace_placer exists and a GPU answers
#           `nvidia-smi -L` at configure time, else EMU.
#   BACKEND defaults to the cache variable MEMPLACE_CUDA_BACKEND (AUTO); memplace_cuda_backend()
#   gives the choice AUTO makes, so that a project can enable CUDA only when it is taken.
#   LAUNCHES_ONLY builds the *original* program: only launches are rewritten (`--launches-only`,
#   for EMU, where `<<<...>>>` is not C++) and nothing of memplace is linked but the emulation
#   layer; with CUDA the files are compiled as written.
#   CLANG_ARGS go to the rewriter after `--` (besides TARGET's include directories and compile
#   definitions, and -I of each file's own folder). The rewritten file keeps its includes:
#   TARGET gets each file's folder on its include path.
#   The rewriter parses CUDA as nvcc does and needs a CUDA toolkit's headers (/usr/local/cuda,
#   $CUDA_PATH, $CUDA_HOME, or the nvcc on PATH). Without one, FALLBACK_DIR (if given) supplies
#   reviewed copies of the rewritten files (<FALLBACK_DIR>/<name>.cu, and
#   <FALLBACK_DIR>/launches-only/<name>.cu for LAUNCHES_ONLY); otherwise configuration fails.
#   The same holds for a memplace built without the frontend (MEMPLACE_WITH_FRONTEND=OFF), and
#   for -DMEMPLACE_REWRITE_USE_FALLBACK=ON (to try that path on a machine that has CUDA).
#
# memplace_cuda_backend(OUT_VAR [BACKEND AUTO|CUDA|EMU])
#   The backend memplace_add_cuda_sources would take: CUDA or EMU.
#
# memplace_rewriter_has_cuda(OUT_VAR)
#   TRUE when the rewriter will find a CUDA installation to parse against.

set(MEMPLACE_CUDA_BACKEND "AUTO" CACHE STRING
    "How memplace_add_cuda_sources builds rewritten CUDA sources: AUTO, CUDA (nvcc) or EMU (CPU emulation)")
set_property(CACHE MEMPLACE_CUDA_BACKEND PROPERTY STRINGS AUTO CUDA EMU)

option(MEMPLACE_REWRITE_USE_FALLBACK
       "memplace_add_cuda_sources takes FALLBACK_DIR copies even where the rewriter could run" OFF)

function(memplace_rewriter_has_cuda out)
  set(candidates)
  foreach(var CUDA_PATH CUDA_HOME)
    if(DEFINED ENV{${var}} AND NOT "$ENV{${var}}" STREQUAL "")
      list(APPEND candidates "$ENV{${var}}")
    endif()
  endforeach()
  list(APPEND candidates /usr/local/cuda)
  find_program(memplace_nvcc_for_rewriter nvcc)
  if(memplace_nvcc_for_rewriter)
    get_filename_component(bin "${memplace_nvcc_for_rewriter}" DIRECTORY)
    get_filename_component(root "${bin}" DIRECTORY)
    list(APPEND candidates "${root}")
  endif()
  foreach(dir ${candidates})
    if(EXISTS "${dir}/include/cuda_runtime.h")
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} FALSE PARENT_SCOPE)
endfunction()

function(memplace_cuda_backend out)
  cmake_parse_arguments(ARG "" "BACKEND" "" ${ARGN})
  set(backend "${ARG_BACKEND}")
  if(NOT backend)
    set(backend "${MEMPLACE_CUDA_BACKEND}")
  endif()
  string(TOUPPER "${backend}" backend)
  if(backend STREQUAL "AUTO")
    get_property(gpu_checked GLOBAL PROPERTY MEMPLACE_GPU_PRESENT SET)
    if(NOT gpu_checked)
      set(present FALSE)
      find_program(memplace_nvidia_smi nvidia-smi)
      if(memplace_nvidia_smi)
        execute_process(COMMAND ${memplace_nvidia_smi} -L RESULT_VARIABLE rc
                        OUTPUT_VARIABLE gpus ERROR_QUIET TIMEOUT 20)
        if(rc EQUAL 0 AND gpus MATCHES "GPU")
          set(present TRUE)
        endif()
      endif()
      set_property(GLOBAL PROPERTY MEMPLACE_GPU_PRESENT ${present})
    endif()
    get_property(present GLOBAL PROPERTY MEMPLACE_GPU_PRESENT)
    include(CheckLanguage)
    check_language(CUDA)
    if(present AND CMAKE_CUDA_COMPILER AND TARGET memplace_placer)
      set(backend "CUDA")
    else()
      set(backend "EMU")
    endif()
  endif()
  if(NOT backend MATCHES "^(CUDA|EMU)$")
    message(FATAL_ERROR "memplace: BACKEND '${backend}' is not AUTO, CUDA or EMU")
  endif()
  set(${out} ${backend} PARENT_SCOPE)
endfunction()

function(memplace_add_cuda_sources target)
  cmake_parse_arguments(ARG "LAUNCHES_ONLY" "BACKEND;FALLBACK_DIR" "FILES;CLANG_ARGS;DEPENDS"
                        ${ARGN})
  if(NOT TARGET ${target})
    message(FATAL_ERROR "memplace_add_cuda_sources: '${target}' is not a target "
                        "(add_executable or add_library first)")
  endif()
  if(NOT ARG_FILES)
    message(FATAL_ERROR "memplace_add_cuda_sources(${target}): no FILES")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "memplace_add_cuda_sources(${target}): unknown arguments "
                        "${ARG_UNPARSED_ARGUMENTS}")
  endif()
  memplace_cuda_backend(backend BACKEND "${ARG_BACKEND}")
  if(backend STREQUAL "CUDA")
    get_property(langs GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT "CUDA" IN_LIST langs)
      message(FATAL_ERROR "memplace_add_cuda_sources(${target}): BACKEND CUDA needs "
                          "enable_language(CUDA) (or project(... LANGUAGES CUDA)) first")
    endif()
    if(NOT ARG_LAUNCHES_ONLY AND NOT TARGET memplace_placer)
      message(FATAL_ERROR "memplace_add_cuda_sources(${target}): memplace_placer is not built "
                          "(no CUDA toolkit found when memplace was configured)")
    endif()
  elseif(NOT TARGET memplace_placer_emu)
    message(FATAL_ERROR "memplace_add_cuda_sources(${target}): the CPU emulation layer "
                        "(memplace_placer_emu) is not built")
  endif()

  # With CUDA, the original program is the files as written.
  if(backend STREQUAL "CUDA" AND ARG_LAUNCHES_ONLY)
    set(outputs)
    foreach(file ${ARG_FILES})
      get_filename_component(abs "${file}" ABSOLUTE)
      list(APPEND outputs "${abs}")
    endforeach()
    target_sources(${target} PRIVATE ${outputs})
    set_source_files_properties(${outputs} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CUDA)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-std=c++20>)
    set_property(TARGET ${target} APPEND PROPERTY MEMPLACE_BACKEND ${backend})
    return()
  endif()

  # The rewriter needs the frontend (clang) and a CUDA installation to parse against.
  memplace_rewriter_has_cuda(have_cuda)
  if(NOT TARGET memplace_rewrite OR (MEMPLACE_REWRITE_USE_FALLBACK AND ARG_FALLBACK_DIR))
    set(have_cuda FALSE)
  endif()
  set(kind "rewritten")
  set(flags)
  if(ARG_LAUNCHES_ONLY)
    set(kind "launches-only")
    set(flags --launches-only)
  endif()
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/memplace/${target}")
  # The rewriter parses with the real CUDA headers: never the emulation layer's.
  set(incs "$<FILTER:$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>,EXCLUDE,/emu/include/?$>")
  set(defs "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  set(outputs)
  set(names)
  foreach(file ${ARG_FILES})
    get_filename_component(abs "${file}" ABSOLUTE)
    get_filename_component(name "${file}" NAME)
    get_filename_component(srcdir "${abs}" DIRECTORY)
    if(name IN_LIST names)
      message(FATAL_ERROR "memplace_add_cuda_sources(${target}): two files named ${name}")
    endif()
    list(APPEND names ${name})
    set(out "${dir}/${name}")
    if(have_cuda)
      add_custom_command(
        OUTPUT "${out}"
        COMMAND $<TARGET_FILE:memplace> rewrite "${abs}" -o "${dir}" --force ${flags} --
                "-I${srcdir}" "$<$<BOOL:${incs}>:-I$<JOIN:${incs},;-I>>"
                "$<$<BOOL:${defs}>:-D$<JOIN:${defs},;-D>>" ${ARG_CLANG_ARGS}
        DEPENDS "${abs}" memplace ${ARG_DEPENDS}
        COMMENT "memplace rewrite ${file} ${flags}"
        COMMAND_EXPAND_LISTS VERBATIM)
    elseif(ARG_FALLBACK_DIR)
      set(copy "${ARG_FALLBACK_DIR}/${name}")
      if(ARG_LAUNCHES_ONLY)
        set(copy "${ARG_FALLBACK_DIR}/launches-only/${name}")
      endif()
      if(NOT EXISTS "${copy}")
        message(FATAL_ERROR "memplace_add_cuda_sources(${target}): no CUDA installation for "
                            "the rewriter, and no reviewed copy ${copy}")
      endif()
      add_custom_command(
        OUTPUT "${out}"
        COMMAND ${CMAKE_COMMAND} -E copy "${copy}" "${out}"
        DEPENDS "${copy}"
        COMMENT "memplace: no CUDA installation for the rewriter; ${kind} ${name} from ${copy}"
        VERBATIM)
    else()
      message(FATAL_ERROR "memplace_add_cuda_sources(${target}): `memplace rewrite` needs a CUDA "
                          "toolkit's headers (/usr/local/cuda, CUDA_PATH, CUDA_HOME or nvcc on "
                          "PATH) and none was found; install one or give FALLBACK_DIR")
    endif()
    list(APPEND outputs "${out}")
    target_include_directories(${target} PRIVATE "${srcdir}")
  endforeach()
  target_sources(${target} PRIVATE ${outputs})

  if(backend STREQUAL "CUDA")
    set_source_files_properties(${outputs} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CUDA)
    # The runtime's headers need C++20 (CMake may not know nvcc's CUDA20 dialect: say it).
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-std=c++20>)
    if(NOT ARG_LAUNCHES_ONLY)
      target_link_libraries(${target} PRIVATE memplace_placer)
    endif()
  else()
    # As memplace_add_emulated_executable does for every source, for these sources only.
    set_source_files_properties(${outputs} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CXX)
    set_property(SOURCE ${outputs} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS
                 -x c++ -include memplace/emu/cuda_emu.h)
    target_compile_features(${target} PRIVATE cxx_std_20)
    if(ARG_LAUNCHES_ONLY)
      target_link_libraries(${target} PRIVATE memplace_emu)
      target_include_directories(${target} BEFORE PRIVATE ${MEMPLACE_EMU_INCLUDE_DIR})
    else()
      target_link_libraries(${target} PRIVATE memplace_placer_emu)
    endif()
    set_target_properties(${target} PROPERTIES ENABLE_EXPORTS ON)
  endif()
  set_property(TARGET ${target} APPEND PROPERTY MEMPLACE_BACKEND ${backend})
endfunction()
