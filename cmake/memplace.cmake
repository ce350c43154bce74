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

# memplace_test(NAME SOURCES... [DEPS libs...] [LABELS labels...])
#   A GoogleTest program registered with ctest; tests run from the source tree root.
function(memplace_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE
    MEMPLACE_SOURCE_DIR="${CMAKE_SOURCE_DIR}" MEMPLACE_BINARY_DIR="${CMAKE_BINARY_DIR}")
  gtest_discover_tests(${name} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                       PROPERTIES LABELS "${ARG_LABELS}" DISCOVERY_TIMEOUT 60)
endfunction()
