# Small helpers shared by the stage libraries and the tests.

# memplace_library(NAME SOURCES... [DEPS libs...])
#   A stage library: the repository root is its public include root.
function(memplace_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${MEMPLACE_INCLUDE_ROOT})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()

# The definitions every test program gets: where the sources and the build are, and the scale
# of its time limits (tests/common/time_budget.h: Debug with ASan and UBSan runs several times
# slower).
function(memplace_test_definitions name)
  target_compile_definitions(${name} PRIVATE
    MEMPLACE_SOURCE_DIR="${CMAKE_SOURCE_DIR}" MEMPLACE_BINARY_DIR="${CMAKE_BINARY_DIR}")
  if(MEMPLACE_SANITIZE)
    target_compile_definitions(${name} PRIVATE MEMPLACE_TEST_TIME_SCALE=10)
  endif()
endfunction()

# memplace_test(NAME SOURCES... [DEPS libs...] [LABELS labels...])
#   A GoogleTest program registered with ctest; tests run from the source tree root.
function(memplace_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  memplace_test_definitions(${name})
  gtest_discover_tests(${name} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                       PROPERTIES LABELS "${ARG_LABELS}" DISCOVERY_TIMEOUT 60)
endfunction()

# The C++ sources and private compile definitions of the libraries `ARGN`, absolute: a fuzzer
# compiles them instrumented, and their lists stay in one place (each library's CMakeLists.txt).
function(memplace_library_sources out_sources out_definitions)
  set(sources)
  set(definitions)
  foreach(target IN LISTS ARGN)
    get_target_property(target_sources ${target} SOURCES)
    get_target_property(dir ${target} SOURCE_DIR)
    foreach(source IN LISTS target_sources)
      if(source MATCHES "\\.cpp$")
        if(NOT IS_ABSOLUTE "${source}")
          set(source "${dir}/${source}")
        endif()
        list(APPEND sources "${source}")
      endif()
    endforeach()
    get_target_property(target_definitions ${target} COMPILE_DEFINITIONS)
    if(target_definitions)
      list(APPEND definitions ${target_definitions})
    endif()
  endforeach()
  set(${out_sources} ${sources} PARENT_SCOPE)
  set(${out_definitions} ${definitions} PARENT_SCOPE)
endfunction()

# memplace_fuzzer(NAME SOURCES... [INSTRUMENT libraries...] [LIBS libs...]
#                 [OPTIONS compile options...] SEEDS dirs... SECONDS s [MAX_LEN bytes]
#                 [TIMEOUT per-input seconds] [LEAKS ON|OFF] [ON_DEMAND])
#   A libFuzzer target (docs/fuzzing.md), with clang only and not in the sanitizer preset:
#   SOURCES (the harness) and the sources of the INSTRUMENT libraries (the project code it
#   exercises) are compiled with -fsanitize=fuzzer,address,undefined, so coverage guides the
#   fuzzer through them; LIBS are linked as built (clang, the emulation layer, the Placer).
#   ctest runs it (label fuzz) for SECONDS on a copy of the SEEDS with
#   tests/spec/fuzz/run_fuzzer.sh. ON_DEMAND: a fuzzer whose instrumented build costs minutes
#   (the frontend's) is not built with the project; its test (labels fuzz and slow, which the
#   default test preset leaves out) builds it first (docs/testing.md).
function(memplace_fuzzer name)
  cmake_parse_arguments(ARG "ON_DEMAND" "SECONDS;MAX_LEN;TIMEOUT;LEAKS"
                        "SOURCES;INSTRUMENT;LIBS;OPTIONS;SEEDS" ${ARGN})
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR MEMPLACE_SANITIZE)
    return()
  endif()
  if(NOT ARG_MAX_LEN)
    set(ARG_MAX_LEN 8192)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 10)
  endif()
  set(leaks 1)
  if(DEFINED ARG_LEAKS AND NOT ARG_LEAKS)
    set(leaks 0)
  endif()
  set(flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
  memplace_library_sources(instrumented definitions ${ARG_INSTRUMENT})
  add_executable(${name} ${ARG_SOURCES} ${instrumented})
  target_include_directories(${name} PRIVATE ${MEMPLACE_INCLUDE_ROOT})
  target_compile_definitions(${name} PRIVATE ${definitions})
  target_compile_options(${name} PRIVATE ${flags} -O1 -g ${ARG_OPTIONS})
  target_link_options(${name} PRIVATE ${flags})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS})
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=${leaks}
            UBSAN_OPTIONS=print_stacktrace=1 MEMPLACE_FUZZ_MAX_LEN=${ARG_MAX_LEN}
            MEMPLACE_FUZZ_TIMEOUT=${ARG_TIMEOUT}
            ${CMAKE_SOURCE_DIR}/tests/spec/fuzz/run_fuzzer.sh $<TARGET_FILE:${name}> ${ARG_SECONDS}
            ${ARG_SEEDS} ${CMAKE_CURRENT_BINARY_DIR}/${name}_work)
  math(EXPR limit "${ARG_SECONDS} * 2 + 120")
  set_tests_properties(${name} PROPERTIES LABELS fuzz TIMEOUT ${limit})
  if(ARG_ON_DEMAND)
    set_target_properties(${name} PROPERTIES EXCLUDE_FROM_ALL TRUE)
    add_test(NAME ${name}_build
             COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target ${name})
    set_tests_properties(${name}_build PROPERTIES LABELS "fuzz;slow" TIMEOUT 3600
                         FIXTURES_SETUP ${name}_binary)
    set_tests_properties(${name} PROPERTIES LABELS "fuzz;slow" FIXTURES_REQUIRED ${name}_binary)
  endif()
endfunction()

# memplace_test_environment()
#   Every test of this directory and those below runs without the user's decision cache (on by
#   default in ~/.cache: a test would find what an earlier run decided) and with its caches and
#   configuration under test-home/ here, never in $HOME. ctest includes the file before it runs
#   any test and the tests inherit its environment; the folder is found when ctest reads it, so
#   a build carried elsewhere (the GPU suite) keeps it. Tests of the
#   cache name their own folders (MEMPLACE_CACHE=<dir>).
function(memplace_test_environment)
  set(file ${CMAKE_CURRENT_BINARY_DIR}/test_environment.cmake)
  file(WRITE ${file}
       "file(REAL_PATH . here) # the folder ctest reads this file in\n"
       "set(ENV{MEMPLACE_CACHE} off)\n"
       "set(ENV{XDG_CACHE_HOME} \"\${here}/test-home/cache\")\n"
       "set(ENV{XDG_CONFIG_HOME} \"\${here}/test-home/config\")\n")
  # Named relative to the folder ctest reads it in (it changes into each test folder), so that
  # the include holds in a carried copy too.
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES test_environment.cmake)
endfunction()
