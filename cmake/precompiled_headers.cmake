# Precompiled headers for GCC's optimized builds: the standard and
# third-party headers most units include, parsed once for the libraries and
# once for the tests instead of once per target (54 units). Each target
# reuses one of two headers (target_precompile_headers REUSE_FROM), built by
# a target of its own that has the same flags: -O2 -g1 -fPIC for the
# libraries, the test code's -Og -g0 -fPIE and GoogleTest's definitions for
# the tests. -Winvalid-pch with -Werror fails the build where a unit could
# not use its header (its flags differ), instead of parsing it silently.
#
# A unit compiles about a fifth faster (kube_test's 16.0 s -> 12.9 s); the
# whole build's compile CPU is in docs/benchmarks.md, "Build and test
# times". Not in the sanitizer or fuzz builds (clang; their test units
# differ in -O level, which clang refuses in a reused header). A file that
# forgets an include these headers hold still compiles here; the sanitizer
# build, without them, catches it in CI.

set(MIGSERVE_PCH_HEADERS
    <algorithm> <atomic> <chrono> <cmath> <filesystem> <functional> <map>
    <memory> <mutex> <optional> <random> <set> <sstream> <string> <thread>
    <utility> <vector> <fmt/format.h> <nlohmann/json.hpp>)

# migserve_precompiled_headers(): gives every library and test binary
# defined so far one of the two headers. Call after add_subdirectory(src).
function(migserve_precompiled_headers)
  set(dir ${PROJECT_BINARY_DIR}/pch)
  file(WRITE ${dir}/library.cc "")
  file(WRITE ${dir}/test.cc "")
  add_library(migserve_pch_library OBJECT ${dir}/library.cc)
  target_link_libraries(migserve_pch_library PRIVATE fmt::fmt
                        nlohmann_json::nlohmann_json)
  target_precompile_headers(migserve_pch_library PRIVATE
                            ${MIGSERVE_PCH_HEADERS})
  add_library(migserve_pch_test OBJECT ${dir}/test.cc)
  set_target_properties(migserve_pch_test PROPERTIES
                        POSITION_INDEPENDENT_CODE OFF)
  target_compile_options(migserve_pch_test PRIVATE -fPIE)
  target_link_libraries(migserve_pch_test PRIVATE fmt::fmt
                        nlohmann_json::nlohmann_json GTest::gtest)
  migserve_test_flags(migserve_pch_test)
  target_precompile_headers(migserve_pch_test PRIVATE ${MIGSERVE_PCH_HEADERS}
                            <gtest/gtest.h> <gmock/gmock.h>)
  set_target_properties(migserve_pch_library migserve_pch_test PROPERTIES
                        UNITY_BUILD OFF)

  set(dirs ${PROJECT_SOURCE_DIR}/src)
  while(dirs)
    list(POP_FRONT dirs d)
    get_property(sub DIRECTORY ${d} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${sub})
    get_property(targets DIRECTORY ${d} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(t IN LISTS targets)
      get_target_property(type ${t} TYPE)
      if(type MATCHES "STATIC_LIBRARY|MODULE_LIBRARY")
        target_precompile_headers(${t} REUSE_FROM migserve_pch_library)
      elseif(type STREQUAL "EXECUTABLE" AND t MATCHES "_test$")
        target_precompile_headers(${t} REUSE_FROM migserve_pch_test)
      endif()
    endforeach()
  endwhile()
endfunction()
